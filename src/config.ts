/**
 * Configuration of the signing proxy (`vcproxy serve`): flags plus `VCPROXY_*` environment
 * variables, parsed and validated in ONE place.
 *
 * This module takes the argument list and an environment object and returns a frozen,
 * validated `ProxyConfig` or throws a `ConfigError` whose message is one line that says what
 * to fix. The only file it reads is the optional `--config FILE` (through an injectable
 * reader, so tests need no disk); the CLI loads the key and certificates. The result is
 * computed once at start-up — nothing on the request path re-parses configuration.
 *
 * Precedence: flag > environment variable (`VCPROXY_*`) > config file > default.
 * Config file keys are the flag names without the leading `--` (JSON or YAML); an unknown
 * key is an error, not silently ignored, so a typo cannot leave a setting at its default.
 *
 * `CONFIG_OPTIONS` is the one table of options: usage text, the README's configuration
 * table (and its drift test) and the config-file key check are all derived from it.
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';


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
  /** Separate plain-HTTP port for /metrics, /health, /ready; the API port then has no /metrics. */
  metricsPort: number | undefined;
  /** How long in-flight requests may finish after SIGTERM/SIGINT, in milliseconds. */
  shutdownGraceMs: number;
  /** The config file that was read, if any. */
  configFile: string | undefined;
  /** `--print-config`: print the effective configuration (secrets masked) and exit. */
  printConfig: boolean;
}

/** Host suffixes of the service's regional endpoints (the reference accepts the same). */
export const DEFAULT_ALLOWED_UPSTREAMS: readonly string[] = ['tesla.com', 'tesla.cn', 'teslamotors.com'];
export const DEFAULT_PAIRING_URL = 'https://tesla.com';

interface FlagSpec {
  key: keyof ProxyConfig | 'help';
  env: string;
  boolean?: boolean;
  help: string;
  /** Not accepted inside a config file (the file's own path, one-shot actions). */
  notInFile?: boolean;
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
    help: 'accept a key file other users can read (throwaway keys, or a container secret mount that cannot be made 0600)',
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
  '--metrics-port': {
    key: 'metricsPort',
    env: 'VCPROXY_METRICS_PORT',
    help: 'serve /metrics (and /health, /ready) on this separate plain-HTTP port; the API port then answers 404 on /metrics (default: /metrics on the API port)',
  },
  '--shutdown-grace': {
    key: 'shutdownGraceMs',
    env: 'VCPROXY_SHUTDOWN_GRACE',
    help: 'on SIGTERM/SIGINT, how long in-flight requests may finish: seconds, or e.g. 500ms / 25s (default 25s)',
  },
  '--config': { key: 'configFile', env: 'VCPROXY_CONFIG', help: 'JSON or YAML file of options (keys are the flag names without --)', notInFile: true },
  '--print-config': {
    key: 'printConfig',
    env: '',
    boolean: true,
    help: 'print the effective configuration (secrets masked) and exit',
    notInFile: true,
  },
  '--help': { key: 'help', env: '', boolean: true, help: 'show this help', notInFile: true },
};

/** One documented option: flag, environment variable, config-file key, help text. */
export interface ConfigOption {
  flag: string;
  /** `''` when the option has no environment variable. */
  env: string;
  /** `''` when the option is not accepted in a config file. */
  fileKey: string;
  boolean: boolean;
  help: string;
}

/** Every option of `vcproxy serve`, in usage order (README table and drift test use this). */
export const CONFIG_OPTIONS: readonly ConfigOption[] = Object.freeze(
  Object.entries(FLAGS).map(([flag, s]) => ({
    flag,
    env: s.env,
    fileKey: s.notInFile ? '' : flag.slice(2),
    boolean: s.boolean === true,
    help: s.help,
  })),
);

export function configUsage(): string {
  const width = Math.max(...Object.keys(FLAGS).map((f) => f.length));
  const lines = Object.entries(FLAGS).map(([flag, s]) => `  ${flag.padEnd(width)}  ${s.help}${s.env ? ` [${s.env}]` : ''}`);
  return [
    'Usage: vcproxy serve --key FILE [options]',
    '',
    'Each option can also be set by its [VCPROXY_*] environment variable or in a --config file',
    '(JSON or YAML; keys are the option names without --). Precedence: flag > environment >',
    'config file > default. --print-config shows the result.',
    '',
    'Options:',
    ...lines,
  ].join('\n');
}

/** Thrown (as a value, not an error) when `--help` is given; the CLI prints usage. */
export const HELP_REQUESTED = Symbol('help');

const LOG_LEVELS = new Set(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

/**
 * Parses flags and environment into a validated configuration.
 * Returns `HELP_REQUESTED` for `--help`; throws `ConfigError` for anything invalid.
 */
export interface ParseOptions {
  /** Reads the `--config` file (tests inject one); default `fs.readFileSync(path, 'utf8')`. */
  readFile?: (path: string) => string;
}

export function parseConfig(
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  opts: ParseOptions = {},
): ProxyConfig | typeof HELP_REQUESTED {
  const fromEnv = new Map<string, string>();
  for (const [flag, spec] of Object.entries(FLAGS)) {
    const v = spec.env ? env[spec.env] : undefined;
    if (v !== undefined && v !== '') fromEnv.set(flag, v);
  }
  const fromArgs = parseArgs(args);
  if (parseBool('--help', fromArgs.get('--help'))) return HELP_REQUESTED;
  const configFile = fromArgs.get('--config') ?? fromEnv.get('--config');
  // Lowest precedence first: file, then environment, then flags.
  const raw = new Map<string, string>(configFile === undefined ? [] : readConfigFile(configFile, opts.readFile));
  for (const [k, v] of fromEnv) raw.set(k, v);
  for (const [k, v] of fromArgs) raw.set(k, v);
  return validate(raw, configFile);
}

function parseArgs(args: readonly string[]): Map<string, string> {
  const raw = new Map<string, string>();
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
  return raw;
}

/**
 * Reads a JSON or YAML config file into flag → string value. YAML is a superset of JSON,
 * so one parser serves both. Values may be strings, numbers, booleans or (for list
 * options) arrays of strings; nested objects are refused.
 */
function readConfigFile(path: string, readFile: ParseOptions['readFile']): Map<string, string> {
  let text: string;
  try {
    text = (readFile ?? ((p: string) => readFileSync(p, 'utf8')))(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? 'error';
    throw new ConfigError(`cannot read --config ${path} (${code}); check the path and its permissions`);
  }
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (e) {
    const first = String((e as Error).message).split('\n')[0];
    throw new ConfigError(`config file ${path} is neither valid JSON nor YAML: ${first}`);
  }
  if (doc === null || doc === undefined) return new Map();
  if (typeof doc !== 'object' || Array.isArray(doc)) {
    throw new ConfigError(`config file ${path} must hold a mapping of option names to values (e.g. "port: 4443")`);
  }
  const out = new Map<string, string>();
  const fileKeys = CONFIG_OPTIONS.filter((o) => o.fileKey !== '').map((o) => o.fileKey);
  for (const [k, v] of Object.entries(doc as Record<string, unknown>)) {
    const flag = `--${k}`;
    const spec = FLAGS[flag];
    if (!spec || spec.notInFile) {
      throw new ConfigError(`config file ${path}: unknown key "${k}" (known keys: ${fileKeys.join(', ')})`);
    }
    if (v === null || v === undefined) continue;
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out.set(flag, String(v));
    else if (Array.isArray(v) && v.every((x) => typeof x === 'string')) out.set(flag, v.join(','));
    else throw new ConfigError(`config file ${path}: "${k}" must be a string, number or boolean`);
  }
  return out;
}

function validate(raw: Map<string, string>, configFile: string | undefined): ProxyConfig {
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
  const metricsPortRaw = raw.get('--metrics-port');
  const metricsPort = metricsPortRaw === undefined ? undefined : parseIntIn('--metrics-port', metricsPortRaw, 0, 0, 65535);
  if (metricsPort !== undefined && metricsPort !== 0 && metricsPort === port) {
    throw new ConfigError('--metrics-port must differ from --port (or leave it out to serve /metrics on the API port)');
  }
  const shutdownGraceMs = parseDurationMs('--shutdown-grace', raw.get('--shutdown-grace'), 25_000, 0);
  const printConfig = parseBool('--print-config', raw.get('--print-config'));

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
    metricsPort,
    shutdownGraceMs,
    configFile,
    printConfig,
  });
}

/** Keys whose values are secrets wherever they appear (none of today's options is one, but
 * `--print-config` must stay safe when one is added, and URLs may carry credentials). */
const SECRET_KEY = /(secret|token|password|passphrase|pin$|credential|api_?key|authorization)/i;
export const MASK = '***';

/** A copy of `value` with secret-like fields masked and URL credentials removed. */
export function maskSecrets(value: unknown, key = ''): unknown {
  if (key !== '' && SECRET_KEY.test(key) && value !== undefined && value !== null && value !== '') return MASK;
  if (Array.isArray(value)) return value.map((v) => maskSecrets(v));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, maskSecrets(v, k)]));
  }
  if (typeof value === 'string' && /^[a-z][a-z0-9+.-]*:\/\/[^/@\s]*@/i.test(value)) {
    return value.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@\s]*@/i, `$1${MASK}@`);
  }
  return value;
}

/**
 * The effective configuration as `--print-config` shows it: every option by its config-file
 * key (so the output can be saved as a config file), secrets masked. File paths (the key
 * file, TLS files) are shown; their contents never are.
 */
export function formatConfig(config: ProxyConfig): string {
  const out: Record<string, unknown> = {};
  for (const [flag, spec] of Object.entries(FLAGS)) {
    if (spec.notInFile || spec.key === 'help') continue;
    let v: unknown = config[spec.key];
    if (spec.key === 'timeoutMs' || spec.key === 'shutdownGraceMs') v = `${v as number}ms`;
    out[flag.slice(2)] = v ?? null;
  }
  return JSON.stringify(maskSecrets(out), null, 2);
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

/** Accepts `10` (seconds), `2.5`, `10s`, `500ms`, and `…ms` as printed by `--print-config`. */
function parseDurationMs(flag: string, v: string | undefined, dflt: number, minMs = 100): number {
  if (v === undefined) return dflt;
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s)?\s*$/.exec(v);
  if (!m) throw new ConfigError(`${flag} must be a duration such as 10, 10s or 500ms, not "${v}"`);
  const n = Number(m[1]) * (m[2] === 'ms' ? 1 : 1000);
  if (n < minMs || n > 600_000) throw new ConfigError(`${flag} must be between ${minMs}ms and 600s`);
  return Math.round(n);
}

/**
 * The README's configuration table, generated from `CONFIG_OPTIONS` (a drift test keeps
 * the README equal to it; `UPDATE_README=1 npx vitest run test/e2e/readme.test.ts`
 * rewrites it). The default is taken from the help text's "(default …)".
 */
export function configTableMarkdown(): string {
  const esc = (s: string): string => s.replace(/\|/g, '\\|');
  const rows = CONFIG_OPTIONS.map((o) => {
    const m = /\s*\((?:default:? )([^()]*(?:\([^()]*\)[^()]*)*)\)/.exec(o.help);
    const dflt = o.help.includes('(required)') ? 'required' : m ? m[1]! : o.boolean ? 'false' : '—';
    const text = (m ? o.help.replace(m[0], '') : o.help).replace(' (required)', '');
    return `| \`${o.flag}\` | ${o.env ? `\`${o.env}\`` : '—'} | ${o.fileKey ? `\`${o.fileKey}\`` : '—'} | ${esc(dflt)} | ${esc(text)} |`;
  });
  return ['| flag | environment | config file key | default | what |', '|---|---|---|---|---|', ...rows].join('\n');
}
