/**
 * `vcproxy sim`: runs the fleet sandbox (simulated service + vehicles) — see src/sim/README.md.
 * Flag parsing and the listener only; behaviour lives in src/sim.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { createLogger } from '../log.js';
import { VcpError } from '../protocol/errors.js';
import { DEFAULT_FLEET_VINS, parseFleet, startSim, type FleetSpec, type RunningSim, type StartSimOptions } from '../sim/index.js';
import { isRoleName } from '../sim/types.js';

export const SIM_HELP = `Usage: vcproxy sim [options]

Runs simulated vehicles behind a simulated fleet service (endpoints, envelope, status codes,
daily limits) plus fault injection under /_sim/. See src/sim/README.md.

Options:
  --port N            port to listen on (default 4444; 0 picks a free port)
  --host ADDR         address to listen on (default 127.0.0.1)
  --fleet FILE        fleet description (JSON or YAML); default: the built-in fleet
  --enroll PEM[:ROLE] enrol a public key (PEM file) on every vehicle; ROLE is owner (default),
                      driver, fleet_manager, vehicle_monitor, charging_manager or guest.
                      Repeatable.
  --time-scale N      divide simulated waits (wake-up 10–60 s) by N (default 1)
  --no-limits         switch off the daily limits (device data 200, commands 50, wake 15,
                      charging commands 5)
  --log-level LEVEL   fatal|error|warn|info|debug|trace|silent (default info)
  -h, --help          show this help
`;

export interface SimCliOptions extends StartSimOptions {
  logLevel: string;
}

/** Parses `vcproxy sim` flags. Throws VcpError (code cli_usage) with a one-line reason. */
export function parseSimArgs(args: string[]): SimCliOptions | 'help' {
  let values: Record<string, string | boolean | string[] | undefined>;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        fleet: { type: 'string' },
        enroll: { type: 'string', multiple: true },
        'time-scale': { type: 'string' },
        'no-limits': { type: 'boolean' },
        'log-level': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (e) {
    throw usage((e as Error).message);
  }
  if (values.help) return 'help';
  const port = values.port === undefined ? 4444 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw usage(`--port must be 0–65535, not ${String(values.port)}`);
  const timeScale = values['time-scale'] === undefined ? 1 : Number(values['time-scale']);
  if (!Number.isFinite(timeScale) || timeScale <= 0) throw usage('--time-scale must be a positive number');
  let fleet: FleetSpec | undefined;
  if (typeof values.fleet === 'string') {
    let text: string;
    try {
      text = readFileSync(values.fleet, 'utf8');
    } catch (e) {
      throw usage(`cannot read --fleet ${values.fleet} (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
    }
    fleet = parseFleet(text, values.fleet);
  }
  const enroll = ((values.enroll as string[] | undefined) ?? []).map((spec) => {
    const i = spec.lastIndexOf(':');
    const maybeRole = i > 0 ? spec.slice(i + 1) : '';
    const [file, role] = i > 0 && isRoleName(maybeRole) ? [spec.slice(0, i), maybeRole] : [spec, 'owner'];
    let pem: string;
    try {
      pem = readFileSync(file, 'utf8');
    } catch (e) {
      throw usage(`cannot read --enroll ${file} (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
    }
    return { publicKey: pem, role };
  });
  return {
    port,
    host: typeof values.host === 'string' ? values.host : '127.0.0.1',
    timeScale,
    limits: values['no-limits'] !== true,
    enroll,
    ...(fleet ? { fleet } : {}),
    logLevel: typeof values['log-level'] === 'string' ? values['log-level'] : 'info',
  };
}

function usage(msg: string): VcpError {
  return new VcpError('cli_usage', `${msg} (run \`vcproxy sim --help\`)`, { status: 400 });
}

/** Waits for SIGINT/SIGTERM, then closes `closers` in order. */
export function untilSignal(closers: Array<() => Promise<void>>, onSignal?: (sig: string) => void): Promise<number> {
  return new Promise<number>((resolve) => {
    const stop = (sig: string): void => {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      onSignal?.(sig);
      void (async () => {
        for (const c of closers) {
          try {
            await c();
          } catch {
            /* keep shutting down the rest */
          }
        }
        resolve(0);
      })();
    };
    const onInt = (): void => stop('SIGINT');
    const onTerm = (): void => stop('SIGTERM');
    process.on('SIGINT', onInt);
    process.on('SIGTERM', onTerm);
  });
}

export async function run(args: string[], _env: NodeJS.ProcessEnv): Promise<number> {
  let opts: SimCliOptions | 'help';
  try {
    opts = parseSimArgs(args);
  } catch (e) {
    process.stderr.write(`vcproxy sim: ${(e as Error).message}\n`);
    return 2;
  }
  if (opts === 'help') {
    process.stdout.write(SIM_HELP);
    return 0;
  }
  const logger = createLogger({ level: opts.logLevel });
  let running: RunningSim;
  try {
    running = await startSim({ ...opts, logger });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const msg =
      code === 'EADDRINUSE' ? `port ${opts.port} is already in use; stop the other process or pass --port` : (e as Error).message;
    process.stderr.write(`vcproxy sim: ${msg}\n`);
    return 1;
  }
  logger.info(
    { url: running.url, vehicles: running.sim.vehicles.length, limits: opts.limits !== false, timeScale: opts.timeScale },
    'vcproxy sim: listening',
  );
  // Install the signal handlers before the banner: whoever reads the banner may send
  // SIGINT at once, and without a handler Node would exit 130 instead of closing cleanly.
  const stopped = untilSignal([() => running.close()], (sig) => logger.info({ signal: sig }, 'vcproxy sim: shutting down'));
  process.stdout.write(
    `Fleet sandbox on ${running.url} — vehicles: ${Object.entries(DEFAULT_FLEET_VINS)
      .filter(([, vin]) => running.sim.find(vin))
      .map(([name, vin]) => `${name}=${vin}`)
      .join(', ') || running.sim.vehicles.map((v) => v.vin).join(', ')}\n`,
  );
  return stopped;
}
