/**
 * Configuration of the signing proxy (`vcproxy serve`): flags plus `VCPROXY_*` environment
 * variables, parsed and validated in ONE place.
 *
 * This module is pure: it takes the argument list and an environment object and returns a
 * frozen, validated `ProxyConfig` or throws a `ConfigError` whose message is one line that
 * says what to fix. It reads no files (the CLI loads the key and certificates) so it is
 * trivially testable, and the result is computed once at start-up — nothing on the request
 * path re-parses configuration.
 *
 * Precedence: flag > environment variable > default.
 */

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

export interface ProxyConfig {
  /** PEM file holding the command private key (P-256). */
  keyFile: string;
  host: string;
  port: number;
  tlsCert: string | undefined;
  tlsKey: string | undefined;
  /** Explicit opt-in to plain HTTP on a non-loopback address. */
  allowInsecureHttp: boolean;
  /** Accept a key file readable by group/others (throwaway example keys only). */
  allowInsecureKeyPermissions: boolean;
  /** Fixed upstream origin (e.g. `https://fleet-api.example.com`), no trailing slash. */
  upstream: string | undefined;
  /** Host suffixes a token's `aud` (or a 421 redirect) may route to, lower-case. */
  allowedUpstreams: readonly string[];
  /** Whole budget of one client request, in milliseconds. */
  timeoutMs: number;
  logLevel: string;
  /** Number of VINs whose sessions are kept in the in-memory LRU. */
  sessionCacheSize: number;
  /** Host of the key-pairing link: `{pairingUrl}/_ak/{developerDomain}`. */
  pairingUrl: string;
  developerDomain: string | undefined;
  /** Largest request body accepted from a client. */
  maxBodyBytes: number;
  /** Largest upstream response body relayed. */
  maxResponseBytes: number;
  /** Commands that may wait behind one VIN before new ones are refused. */
  vinQueueLimit: number;
  /** Max upstream connections per origin. */
  upstreamConnections: number;
}

/** Host suffixes of the service's regional endpoints (the reference accepts the same). */
export const DEFAULT_ALLOWED_UPSTREAMS: readonly string[] = ['tesla.com', 'tesla.cn', 'teslamotors.com'];
export const DEFAULT_PAIRING_URL = 'https://tesla.com';

interface FlagSpec {
  key: keyof ProxyConfig | 'help';
  env: string;
  boolean?: boolean;
  help: string;
}

const FLAGS: Record<string, FlagSpec> = {
  '--key': { key: 'keyFile', env: 'VCPROXY_KEY', help: 'PEM file with the command private key (required)' },
  '--host': { key: 'host', env: 'VCPROXY_HOST', help: 'address to listen on (default 127.0.0.1)' },
  '--port': { key: 'port', env: 'VCPROXY_PORT', help: 'port to listen on (default 4443)' },
  '--tls-cert': { key: 'tlsCert', env: 'VCPROXY_TLS_CERT', help: 'TLS certificate (PEM) for the listener' },
  '--tls-key': { key: 'tlsKey', env: 'VCPROXY_TLS_KEY', help: 'TLS private key (PEM); must not be the command key' },
  '--allow-insecure-http': {
    key: 'allowInsecureHttp',
    env: 'VCPROXY_ALLOW_INSECURE_HTTP',
    boolean: true,
    help: 'serve plain HTTP on a non-loopback address (not recommended)',
  },
  '--allow-insecure-key-permissions': {
    key: 'allowInsecureKeyPermissions',
    env: 'VCPROXY_ALLOW_INSECURE_KEY_PERMISSIONS',
    boolean: true,
    help: 'accept a key file other users can read (throwaway example keys only)',
  },
  '--upstream': { key: 'upstream', env: 'VCPROXY_UPSTREAM', help: 'fixed upstream base URL for every request' },
  '--allowed-upstreams': {
    key: 'allowedUpstreams',
    env: 'VCPROXY_ALLOWED_UPSTREAMS',
    help: `comma-separated host suffixes a token may route to (default ${DEFAULT_ALLOWED_UPSTREAMS.join(',')})`,
  },
  '--timeout': { key: 'timeoutMs', env: 'VCPROXY_TIMEOUT', help: 'budget of one request: seconds, or e.g. 500ms / 10s (default 10s)' },
  '--log-level': { key: 'logLevel', env: 'VCPROXY_LOG_LEVEL', help: 'fatal|error|warn|info|debug|trace|silent (default info)' },
  '--session-cache-size': { key: 'sessionCacheSize', env: 'VCPROXY_SESSION_CACHE_SIZE', help: 'VINs kept in the session cache (default 10000)' },
  '--pairing-url': { key: 'pairingUrl', env: 'VCPROXY_PAIRING_URL', help: `key-pairing link host (default ${DEFAULT_PAIRING_URL})` },
  '--developer-domain': { key: 'developerDomain', env: 'VCPROXY_DEVELOPER_DOMAIN', help: 'your registered domain, shown in pairing links' },
  '--max-body-bytes': { key: 'maxBodyBytes', env: 'VCPROXY_MAX_BODY_BYTES', help: 'largest client request body (default 1048576)' },
  '--max-response-bytes': { key: 'maxResponseBytes', env: 'VCPROXY_MAX_RESPONSE_BYTES', help: 'largest upstream response relayed (default 10000000)' },
  '--vin-queue-limit': { key: 'vinQueueLimit', env: 'VCPROXY_VIN_QUEUE_LIMIT', help: 'commands waiting per VIN before 503 (default 1000)' },
  '--upstream-connections': { key: 'upstreamConnections', env: 'VCPROXY_UPSTREAM_CONNECTIONS', help: 'connections per upstream origin (default 128)' },
  '--help': { key: 'help', env: '', boolean: true, help: 'show this help' },
};

export function configUsage(): string {
  const width = Math.max(...Object.keys(FLAGS).map((f) => f.length));
  const lines = Object.entries(FLAGS).map(([flag, s]) => `  ${flag.padEnd(width)}  ${s.help}${s.env ? ` [${s.env}]` : ''}`);
  return ['Usage: vcproxy serve --key FILE [options]', '', 'Options:', ...lines].join('\n');
}

/** Thrown (as a value, not an error) when `--help` is given; the CLI prints usage. */
export const HELP_REQUESTED = Symbol('help');

const LOG_LEVELS = new Set(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

/**
 * Parses flags and environment into a validated configuration.
 * Returns `HELP_REQUESTED` for `--help`; throws `ConfigError` for anything invalid.
 */
export function parseConfig(
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): ProxyConfig | typeof HELP_REQUESTED {
  const raw = new Map<string, string>();
  for (const [flag, spec] of Object.entries(FLAGS)) {
    const v = spec.env ? env[spec.env] : undefined;
    if (v !== undefined && v !== '') raw.set(flag, v);
  }
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const eq = arg.indexOf('=');
    const flag = arg.startsWith('--') && eq > 0 ? arg.slice(0, eq) : arg;
    const spec = FLAGS[flag];
    if (!spec) throw new ConfigError(`unknown option "${flag}" (run \`vcproxy serve --help\`)`);
    if (spec.boolean) {
      raw.set(flag, eq > 0 ? arg.slice(eq + 1) : 'true');
      continue;
    }
    let value: string | undefined;
    if (eq > 0) value = arg.slice(eq + 1);
    else {
      value = args[i + 1];
      i++;
    }
    if (value === undefined || (eq < 0 && value.startsWith('--'))) {
      throw new ConfigError(`option ${flag} needs a value`);
    }
    raw.set(flag, value);
  }
  if (parseBool('--help', raw.get('--help'))) return HELP_REQUESTED;

  const keyFile = raw.get('--key');
  if (!keyFile) throw new ConfigError('missing --key FILE (or VCPROXY_KEY): the PEM file with your command private key');

  const host = raw.get('--host') ?? '127.0.0.1';
  const port = parseIntIn('--port', raw.get('--port'), 4443, 0, 65535);
  const tlsCert = raw.get('--tls-cert');
  const tlsKey = raw.get('--tls-key');
  if ((tlsCert === undefined) !== (tlsKey === undefined)) {
    throw new ConfigError('--tls-cert and --tls-key must be given together');
  }
  const allowInsecureHttp = parseBool('--allow-insecure-http', raw.get('--allow-insecure-http'));
  if (!tlsCert && !isLoopbackHost(host) && !allowInsecureHttp) {
    throw new ConfigError(
      `refusing to serve plain HTTP on non-loopback address ${host}: give --tls-cert and --tls-key, or --allow-insecure-http if a TLS terminator sits in front`,
    );
  }

  const allowInsecureKeyPermissions = parseBool('--allow-insecure-key-permissions', raw.get('--allow-insecure-key-permissions'));
  const upstreamRaw = raw.get('--upstream');
  const upstream = upstreamRaw === undefined ? undefined : parseUpstream(upstreamRaw);

  const allowedRaw = raw.get('--allowed-upstreams');
  const allowedUpstreams =
    allowedRaw === undefined
      ? DEFAULT_ALLOWED_UPSTREAMS
      : allowedRaw
          .split(',')
          .map((s) => s.trim().toLowerCase().replace(/^\*?\./, ''))
          .filter((s) => s !== '');
  for (const s of allowedUpstreams) {
    if (!/^[a-z0-9.-]+$/.test(s) && !/^\[[0-9a-f:]+\]$/.test(s)) {
      throw new ConfigError(`--allowed-upstreams: "${s}" is not a host name suffix`);
    }
  }

  const timeoutMs = parseDurationMs('--timeout', raw.get('--timeout'), 10_000);
  const logLevel = raw.get('--log-level') ?? 'info';
  if (!LOG_LEVELS.has(logLevel)) {
    throw new ConfigError(`--log-level must be one of ${[...LOG_LEVELS].join(', ')}`);
  }
  const sessionCacheSize = parseIntIn('--session-cache-size', raw.get('--session-cache-size'), 10_000, 1, 10_000_000);
  const pairingUrl = (raw.get('--pairing-url') ?? DEFAULT_PAIRING_URL).replace(/\/+$/, '');
  try {
    const u = new URL(pairingUrl);
    if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new Error('scheme');
  } catch {
    throw new ConfigError(`--pairing-url "${pairingUrl}" is not an http(s) URL`);
  }
  const developerDomain = raw.get('--developer-domain');
  if (developerDomain !== undefined && !/^[A-Za-z0-9.-]+$/.test(developerDomain)) {
    throw new ConfigError(`--developer-domain "${developerDomain}" is not a domain name`);
  }
  const maxBodyBytes = parseIntIn('--max-body-bytes', raw.get('--max-body-bytes'), 1024 * 1024, 64, 1024 * 1024 * 1024);
  const maxResponseBytes = parseIntIn('--max-response-bytes', raw.get('--max-response-bytes'), 10_000_000, 1024, 1024 * 1024 * 1024);
  const vinQueueLimit = parseIntIn('--vin-queue-limit', raw.get('--vin-queue-limit'), 1000, 1, 1_000_000);
  const upstreamConnections = parseIntIn('--upstream-connections', raw.get('--upstream-connections'), 128, 1, 100_000);

  return Object.freeze({
    keyFile,
    host,
    port,
    tlsCert,
    tlsKey,
    allowInsecureHttp,
    allowInsecureKeyPermissions,
    upstream,
    allowedUpstreams: Object.freeze([...allowedUpstreams]),
    timeoutMs,
    logLevel,
    sessionCacheSize,
    pairingUrl,
    developerDomain,
    maxBodyBytes,
    maxResponseBytes,
    vinQueueLimit,
    upstreamConnections,
  });
}

/** True for addresses only this machine can reach: 127.0.0.0/8, ::1, localhost. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

function parseUpstream(value: string): string {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    throw new ConfigError(`--upstream "${value}" is not a URL (expected e.g. https://fleet-api.example.com)`);
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') {
    throw new ConfigError(`--upstream must use http:// or https://, not ${u.protocol}`);
  }
  if ((u.pathname !== '/' && u.pathname !== '') || u.search || u.hash || u.username || u.password) {
    throw new ConfigError('--upstream must be a bare origin (scheme://host[:port]) without path, query or credentials');
  }
  return u.origin;
}

function parseBool(flag: string, v: string | undefined): boolean {
  if (v === undefined) return false;
  const s = v.toLowerCase();
  if (s === 'true' || s === '1' || s === 'yes' || s === 'on') return true;
  if (s === 'false' || s === '0' || s === 'no' || s === 'off' || s === '') return false;
  throw new ConfigError(`${flag} expects true or false, not "${v}"`);
}

function parseIntIn(flag: string, v: string | undefined, dflt: number, min: number, max: number): number {
  if (v === undefined) return dflt;
  if (!/^\d+$/.test(v.trim())) throw new ConfigError(`${flag} must be a whole number, not "${v}"`);
  const n = Number(v.trim());
  if (n < min || n > max) throw new ConfigError(`${flag} must be between ${min} and ${max}, not ${n}`);
  return n;
}

/** Accepts `10` (seconds), `2.5`, `10s`, `500ms`. */
function parseDurationMs(flag: string, v: string | undefined, dflt: number): number {
  if (v === undefined) return dflt;
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s)?\s*$/.exec(v);
  if (!m) throw new ConfigError(`${flag} must be a duration such as 10, 10s or 500ms, not "${v}"`);
  const n = Number(m[1]) * (m[2] === 'ms' ? 1 : 1000);
  if (n < 100 || n > 600_000) throw new ConfigError(`${flag} must be between 100ms and 600s`);
  return Math.round(n);
}
