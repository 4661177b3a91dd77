/**
 * Logger factory. Owns redaction: nothing that reaches a log line may contain a bearer
 * token, PIN, password, private key or signed payload, at any level including debug.
 * Redaction is by path (pino's fast-redact) so it costs nothing on the hot path.
 */
import { pino, type Logger, type LoggerOptions } from 'pino';
import { COMMANDS } from './commands/index.js';

/**
 * Field names whose values are secrets wherever they sit in a log object: bearer tokens,
 * signed payloads, key material, and every command parameter the catalogue marks as
 * secret (`CommandDef.secretFields`: PINs, passwords). Deriving the last group from the
 * catalogue means a new secret parameter is redacted without anyone editing this file.
 */
export const SECRET_FIELDS: readonly string[] = [
  ...new Set([
    'authorization',
    'Authorization',
    'cookie',
    'token',
    'access_token',
    'refresh_token',
    'id_token',
    'client_secret',
    'pin',
    'password',
    'routable_message',
    'privateKey',
    'private_key',
    'key_material',
    'scalar',
    'pem',
    ...COMMANDS.flatMap((c) => c.secretFields),
  ]),
];

/**
 * Paths whose values are replaced by "[redacted]". fast-redact matches exact paths (a `*`
 * covers ONE level), so each secret field is listed at the top level and up to three levels
 * down — deep enough for `{req: {headers: {authorization}}}` and `{body: {…}}` shapes.
 * Code never logs raw bodies or header objects in the first place; this is the net under
 * that rule.
 */
export const REDACT_PATHS: string[] = SECRET_FIELDS.flatMap((f) => {
  const k = /^[A-Za-z_$][\w$]*$/.test(f) ? f : `["${f}"]`;
  const dot = k.startsWith('[') ? k : `.${k}`;
  return [k, `*${dot}`, `*.*${dot}`, `*.*.*${dot}`];
});

export type { Logger };

export interface LogOptions {
  level?: string;
  /** Pretty output for humans; defaults to whether stdout is a terminal. */
  pretty?: boolean;
  /** Write somewhere other than stdout (tests capture logs this way). */
  destination?: NodeJS.WritableStream;
}

export function createLogger(opts: LogOptions = {}): Logger {
  const options: LoggerOptions = {
    level: opts.level ?? 'info',
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    base: undefined,
  };
  if (opts.destination) return pino(options, opts.destination as pino.DestinationStream);
  if (opts.pretty ?? process.stdout.isTTY) {
    return pino({ ...options, transport: { target: 'pino-pretty', options: { colorize: true } } });
  }
  return pino(options);
}

/** A logger that drops everything; the default for library code and tests. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
