/**
 * `vcproxy serve` start-up: TLS listener (1.2+), and every start-up failure gives ONE clear
 * line on stderr and a non-zero exit code.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile, copyFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Agent } from 'undici';
import { run, startProxy } from '../../src/cli/serve.js';
import { parseConfig, type ProxyConfig } from '../../src/config.js';
import { exampleKeyFile } from './proxy-fake-upstream.js';

let dir: string;
let keyFile: { path: string; cleanup(): Promise<void> };
let cert: string;
let tlsKey: string;

beforeAll(async () => {
  keyFile = await exampleKeyFile();
  dir = await mkdtemp(join(tmpdir(), 'vcproxy-tls-'));
  tlsKey = join(dir, 'tls-key.pem');
  cert = join(dir, 'tls-cert.pem');
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-keyout', tlsKey, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1',
  ], { stdio: 'ignore' });
});
afterAll(async () => {
  await keyFile.cleanup();
  await rm(dir, { recursive: true, force: true });
});

async function runServe(args: string[]): Promise<{ code: number; stderr: string }> {
  let stderr = '';
  const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stderr += chunk.toString();
    return true;
  });
  try {
    const code = await run(args, {});
    return { code, stderr };
  } finally {
    spy.mockRestore();
  }
}

describe('vcproxy serve start-up', () => {
  it('serves HTTPS with TLS 1.2 as the minimum', async () => {
    const cfg = parseConfig(['--key', keyFile.path, '--port', '0', '--tls-cert', cert, '--tls-key', tlsKey, '--upstream', 'http://127.0.0.1:9'], {}) as ProxyConfig;
    const p = await startProxy(cfg);
    try {
      expect(p.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      const ok = new Agent({ connect: { rejectUnauthorized: false } });
      const res = await fetch(`${p.url}/status`, { dispatcher: ok } as RequestInit);
      expect(await res.text()).toBe('ok');
      await ok.close();
      const old = new Agent({ connect: { rejectUnauthorized: false, maxVersion: 'TLSv1.1', minVersion: 'TLSv1' } });
      await expect(fetch(`${p.url}/status`, { dispatcher: old } as RequestInit)).rejects.toThrow();
      await old.close();
    } finally {
      await p.close();
    }
  });

  async function busyPort(): Promise<{ port: number; server: Server }> {
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return { port: (server.address() as { port: number }).port, server };
  }

  it.each([
    ['missing key file', () => ['--key', join(dir, 'nope.pem')], /key file .*nope\.pem does not exist/],
    ['unreadable certificate', () => ['--key', keyFile.path, '--tls-cert', join(dir, 'missing-cert.pem'), '--tls-key', tlsKey], /cannot read --tls-cert .*ENOENT/],
    ['TLS key equal to the command key', () => ['--key', keyFile.path, '--tls-cert', cert, '--tls-key', keyFile.path], /--tls-key is the command key/],
    ['bad configuration', () => ['--key', keyFile.path, '--port', 'x'], /--port must be a whole number/],
  ])('%s → one line, non-zero exit', async (_name, args, re) => {
    const r = await runServe(args());
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(re);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('port in use → one line, non-zero exit', async () => {
    const { port, server } = await busyPort();
    try {
      const r = await runServe(['--key', keyFile.path, '--port', String(port)]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(new RegExp(`port ${port} on 127.0.0.1 is already in use`));
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    } finally {
      server.close();
    }
  });

  it('refuses a group-readable key file', async () => {
    const loose = join(dir, 'loose.pem');
    await copyFile(keyFile.path, loose);
    const { chmod } = await import('node:fs/promises');
    await chmod(loose, 0o644);
    const r = await runServe(['--key', loose]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/chmod 600/);
    // Explicit opt-in (for the throwaway example key): starts.
    const cfg = parseConfig(['--key', loose, '--port', '0', '--allow-insecure-key-permissions'], {}) as ProxyConfig;
    const p = await startProxy(cfg);
    expect((await fetch(`${p.url}/health`)).status).toBe(200);
    await p.close();
    await writeFile(loose, '');
  });
});
