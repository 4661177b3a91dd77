/**
 * `vcproxy` command-line entry point. The CLI (this file and src/cli/*) is the only code
 * that reads process.env, parses flags and starts servers; everything below it takes
 * explicit configuration so it can be tested in process.
 *
 * Each subcommand lives in src/cli/<name>.ts and exports `run(args, env)`, resolving to
 * the process exit code. They are loaded lazily so `vcproxy keygen` does not pay for
 * loading the HTTP stack.
 */
import { pathToFileURL } from 'node:url';

export interface Subcommand {
  summary: string;
  load: () => Promise<{ run(args: string[], env: NodeJS.ProcessEnv): Promise<number> }>;
}

export const SUBCOMMANDS: Record<string, Subcommand> = {
  serve: { summary: 'run the signing proxy', load: () => import('./cli/serve.js') },
  sim: { summary: 'run the fleet sandbox (simulated service and vehicles)', load: () => import('./cli/sim.js') },
  sandbox: { summary: 'run the sandbox with the proxy in front of it (what `npm start` runs)', load: () => import('./cli/sandbox.js') },
  keygen: { summary: 'generate a P-256 command key pair', load: () => import('./cli/keygen.js') },
  sign: { summary: 'sign one command offline and print the routable message', load: () => import('./cli/sign.js') },
  decode: { summary: 'decode a routable message or answer (base64 or hex) as JSON', load: () => import('./cli/decode.js') },
  jws: { summary: 'sign a telemetry configuration offline (JWS)', load: () => import('./cli/jws.js') },
};

export function usage(): string {
  const width = Math.max(...Object.keys(SUBCOMMANDS).map((n) => n.length));
  const lines = Object.entries(SUBCOMMANDS).map(([n, s]) => `  ${n.padEnd(width)}  ${s.summary}`);
  return [
    'Usage: vcproxy <command> [options]',
    '',
    'Commands:',
    ...lines,
    '',
    'Run `vcproxy <command> --help` for the options of a command.',
  ].join('\n');
}

export async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(usage() + '\n');
    return name === undefined ? 1 : 0;
  }
  const sub = SUBCOMMANDS[name];
  if (!sub) {
    process.stderr.write(`vcproxy: unknown command "${name}"\n\n${usage()}\n`);
    return 2;
  }
  const mod = await sub.load();
  return mod.run(rest, env);
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (invokedDirectly) void runMain();

/** Runs the CLI with this process's arguments and environment and sets the exit code. */
export function runMain(): Promise<void> {
  return main(process.argv.slice(2), process.env).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      const msg = err instanceof Error ? err.message : String(err);
      process.stderr.write(`vcproxy: ${msg}\n`);
      process.exitCode = 1;
    },
  );
}
