/**
 * Logger factory. Owns redaction: nothing that reaches a log line may contain a bearer
 * token, PIN, password, private key or signed payload, at any level including debug.
 * Redaction is by path (pino's fast-redact) so it costs nothing on the hot path.
 */
import { pino, type Logger, type LoggerOptions } from 'pino';

/** Paths whose values are replaced by "[redacted]" wherever they appear in a log object. */
export const REDACT_PATHS = [
  'authorization',
  'Authorization',
  'token',
  'access_token',
  'refresh_token',
  'pin',
  'password',
  'routable_message',
  'privateKey',
  'private_key',
  '*.authorization',
  '*.Authorization',
  '*.token',
  '*.pin',
  '*.password',
  '*.routable_message',
  '*.privateKey',
  'req.headers.authorization',
  'headers.authorization',
  'body.pin',
  'body.password',
  'body.routable_message',
];

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
