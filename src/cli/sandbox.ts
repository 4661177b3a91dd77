/**
 * `vcproxy sandbox` (what `npm start` runs): the fleet simulator plus the signing proxy in
 * front of it, ready to try with curl.
 *
 * On first run a command key is generated into a git-ignored `.sandbox/` folder (directory
 * 0700, key 0600, created exclusively so an existing key is never overwritten) and enrolled
 * as owner on every simulated vehicle. Then: simulator on 4444, proxy on 4443 with
 * `--upstream` = the simulator, and a banner with the proxy URL, a dummy bearer token and two
 * one-line curl commands. Ctrl-C closes both servers.
 */
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { parseConfig, HELP_REQUESTED } from '../config.js';
import { createLogger, silentLogger } from '../log.js';
import { generateKeyPair, loadKeyFile } from '../keys/index.js';
import { DEFAULT_FLEET_VINS, startSim } from '../sim/index.js';
import { startProxy } from './serve.js';
import { untilSignal } from './sim.js';
import type { Logger } from '../log.js';

export const SANDBOX_HELP = `Usage: vcproxy sandbox [options]     (npm start)

Runs the fleet simulator and the signing proxy in front of it, with a sandbox key
generated on first run (kept in .sandbox/, git-ignored) and enrolled on every vehicle.

Options:
  --port N          proxy port (default 4443; 0 picks a free port)
  --sim-port N      simulator port (default 4444; 0 picks a free port)
  --host ADDR       address for both listeners (default 127.0.0.1)
  --dir DIR         where the sandbox key lives (default ./.sandbox)
  --time-scale N    speed up simulated waits such as wake-up (default 1)
  --no-limits       switch off the simulator's daily limits
  --log-level LVL   log level of both servers (default warn)
  -h, --help        show this help
`;

export interface SandboxOptions {
  port?: number;
  simPort?: number;
  host?: string;
  dir?: string;
  timeScale?: number;
  limits?: boolean;
  logger?: Logger;
  now?: () => number;
}

export interface RunningSandbox {
  proxyUrl: string;
  simUrl: string;
  token: string;
  vin: string;
  keyFile: string;
  /** [lock through the proxy, read vehicle_data] — each one line. */
  curl: [string, string];
  close(): Promise<void>;
}

export const SANDBOX_KEY_FILE = 'private-key.pem';

/** Creates the sandbox key if missing; returns its path. Never overwrites. */
export function ensureSandboxKey(dir: string): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const keyFile = join(dir, SANDBOX_KEY_FILE);
  if (!existsSync(keyFile)) {
    const pair = generateKeyPair();
    writeFileSync(keyFile, pair.privatePem, { mode: 0o600, flag: 'wx' });
    writeFileSync(join(dir, 'public-key.pem'), pair.publicPem, { mode: 0o644, flag: 'w' });
    writeFileSync(join(dir, '.gitignore'), '*\n', { flag: 'w' });
  }
  // A key copied in by hand may have loose permissions; the keystore refuses those.
  chmodSync(keyFile, 0o600);
  return keyFile;
}

/** A JWT-shaped dummy token: the simulator accepts any non-empty bearer token. */
export function sandboxToken(audience: string, nowMs: number): string {
  const b64 = (o: object): string => Buffer.from(JSON.stringify(o)).toString('base64url');
  const iat = Math.floor(nowMs / 1000);
  return [
    b64({ alg: 'none', typ: 'JWT', kid: 'sandbox' }),
    b64({
      iss: 'vcproxy-sandbox',
      sub: 'sandbox-user',
      aud: [audience],
      scp: ['openid', 'offline_access', 'vehicle_device_data', 'vehicle_cmds', 'vehicle_charging_cmds'],
      iat,
      exp: iat + 10 * 365 * 24 * 3600,
    }),
    'sandbox',
  ].join('.');
}

export async function startSandbox(o: SandboxOptions = {}): Promise<RunningSandbox> {
  const host = o.host ?? '127.0.0.1';
  const logger = o.logger ?? silentLogger();
  const keyFile = ensureSandboxKey(resolve(o.dir ?? '.sandbox'));
  const key = loadKeyFile(keyFile);
  const sim = await startSim({
    host,
    port: o.simPort ?? 4444,
    enroll: [{ publicKey: key.publicKey, role: 'owner' }],
    ...(o.timeScale ? { timeScale: o.timeScale } : {}),
    limits: o.limits ?? true,
    logger,
    ...(o.now ? { now: o.now } : {}),
  });
  let proxy: Awaited<ReturnType<typeof startProxy>>;
  try {
    const config = parseConfig(
      ['--key', keyFile, '--upstream', sim.url, '--host', host, '--port', String(o.port ?? 4443), '--log-level', logger.level ?? 'warn'],
      {},
    );
    if (config === HELP_REQUESTED) throw new Error('unexpected help');
    proxy = await startProxy(config, { logger });
  } catch (e) {
    await sim.close();
    throw e;
  }
  const vin = DEFAULT_FLEET_VINS.modern;
  const token = sandboxToken(sim.url, (o.now ?? Date.now)());
  const auth = `-H 'Authorization: Bearer ${token}'`;
  const curl: [string, string] = [
    `curl -s -X POST ${auth} -H 'Content-Type: application/json' -d '{}' ${proxy.url}/api/1/vehicles/${vin}/command/door_lock`,
    `curl -s ${auth} ${proxy.url}/api/1/vehicles/${vin}/vehicle_data`,
  ];
  return {
    proxyUrl: proxy.url,
    simUrl: sim.url,
    token,
    vin,
    keyFile,
    curl,
    close: async () => {
      await proxy.close();
      await sim.close();
    },
  };
}

export async function run(args: string[], _env: NodeJS.ProcessEnv): Promise<number> {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        port: { type: 'string' },
        'sim-port': { type: 'string' },
        host: { type: 'string' },
        dir: { type: 'string' },
        'time-scale': { type: 'string' },
        'no-limits': { type: 'boolean' },
        'log-level': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (e) {
    process.stderr.write(`vcproxy sandbox: ${(e as Error).message} (run \`vcproxy sandbox --help\`)\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(SANDBOX_HELP);
    return 0;
  }
  const port = (v: unknown, d: number): number => (typeof v === 'string' ? Number(v) : d);
  const p = port(values.port, 4443);
  const sp = port(values['sim-port'], 4444);
  for (const [flag, n] of [['--port', p], ['--sim-port', sp]] as const) {
    if (!Number.isInteger(n) || n < 0 || n > 65535) {
      process.stderr.write(`vcproxy sandbox: ${flag} must be 0–65535\n`);
      return 2;
    }
  }
  const timeScale = typeof values['time-scale'] === 'string' ? Number(values['time-scale']) : 1;
  if (!Number.isFinite(timeScale) || timeScale <= 0) {
    process.stderr.write('vcproxy sandbox: --time-scale must be a positive number\n');
    return 2;
  }
  const logger = createLogger({ level: typeof values['log-level'] === 'string' ? values['log-level'] : 'warn' });
  let sb: RunningSandbox;
  try {
    sb = await startSandbox({
      port: p,
      simPort: sp,
      ...(typeof values.host === 'string' ? { host: values.host } : {}),
      ...(typeof values.dir === 'string' ? { dir: values.dir } : {}),
      timeScale,
      limits: values['no-limits'] !== true,
      logger,
    });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const msg = code === 'EADDRINUSE' ? 'a sandbox port is already in use; stop the other process or pass --port/--sim-port' : (e as Error).message;
    process.stderr.write(`vcproxy sandbox: ${msg}\n`);
    return 1;
  }
  // Handlers first, banner second: a supervisor (or a test) may send SIGINT the moment it
  // reads "Press Ctrl-C"; without a handler yet, Node's default action kills the process
  // with 130 instead of closing both servers and exiting 0.
  const stopped = untilSignal([() => sb.close()], () => process.stdout.write('\nShutting down the sandbox…\n'));
  process.stdout.write(
    [
      '',
      'Fleet sandbox is running.',
      `  proxy      ${sb.proxyUrl}   (signs commands with ${sb.keyFile})`,
      `  simulator  ${sb.simUrl}   (fault injection under /_sim/, see src/sim/README.md)`,
      `  vehicle    ${sb.vin}`,
      `  token      ${sb.token}`,
      '',
      'Lock the car through the proxy:',
      sb.curl[0],
      '',
      'Read its vehicle_data ("locked": true):',
      sb.curl[1],
      '',
      'Press Ctrl-C to stop.',
      '',
    ].join('\n'),
  );
  return stopped;
}
