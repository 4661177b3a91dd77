/**
 * Output plumbing shared by the small offline tools (`sign`, `decode`, `jws`): where they
 * write, injectable so tests capture output in process instead of spawning a child.
 */
import { isVcpError } from '../protocol/errors.js';
import { loadKeyFile, type LocalKey } from '../keys/index.js';

export interface CliIo {
  stdout: { write(s: string): unknown };
  stderr: { write(s: string): unknown };
  /** Reads all of standard input (for `-` arguments). */
  readStdin(): Promise<string>;
}

export const processIo: CliIo = {
  stdout: process.stdout,
  stderr: process.stderr,
  async readStdin() {
    const chunks: Buffer[] = [];
    for await (const c of process.stdin) chunks.push(Buffer.isBuffer(c) ? c : Buffer.from(String(c)));
    return Buffer.concat(chunks).toString('utf8');
  },
};

/**
 * Prints an error as one line, `vcproxy <tool>: [code] message`, and returns exit code 1.
 * VcpError messages are written to be shown (no secrets); other errors show their message.
 */
export function printError(io: CliIo, tool: string, err: unknown): number {
  if (isVcpError(err)) io.stderr.write(`vcproxy ${tool}: [${err.code}] ${err.message}\n`);
  else io.stderr.write(`vcproxy ${tool}: ${err instanceof Error ? err.message : String(err)}\n`);
  return 1;
}

/** For argument errors: the message, a pointer to --help, exit code 2. */
export function usageError(io: CliIo, tool: string, message: string): number {
  io.stderr.write(`vcproxy ${tool}: ${message}\nRun \`vcproxy ${tool} --help\` for usage.\n`);
  return 2;
}

/**
 * Loads the command key for an offline tool: `--key` or VCPROXY_KEY chose the file; the
 * group/other-readable refusal is lifted by `--allow-insecure-key-permissions` or
 * VCPROXY_ALLOW_INSECURE_KEY_PERMISSIONS (1/true/yes/on), as for `vcproxy serve`.
 */
export function loadToolKey(keyFile: string, allowFlag: boolean | undefined, env: NodeJS.ProcessEnv): LocalKey {
  const fromEnv = /^(1|true|yes|on)$/i.test(env.VCPROXY_ALLOW_INSECURE_KEY_PERMISSIONS ?? '');
  return loadKeyFile(keyFile, { allowInsecurePermissions: allowFlag === true || fromEnv });
}
