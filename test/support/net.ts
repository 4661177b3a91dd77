/** Small helpers shared by tests that start real servers. */
import { execFileSync } from 'node:child_process';
import { connect } from 'node:net';

/** Resolves with the connect error code, or 'connected' if the port still accepts. */
export function tryConnect(port: number): Promise<string> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve('connected');
    });
    s.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
  });
}

/** True when the `openssl` command is available (tests that make certificates need it). */
export function hasOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
