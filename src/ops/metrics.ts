/**
 * Prometheus metrics for the proxy (`vcproxy_*`).
 *
 * Owns: the metric definitions, their label sets and the exposition text. Each call to
 * `createMetrics()` builds its own prom-client `Registry` — never the global one — so tests
 * and several app instances in one process do not collide ("metric already registered").
 *
 * Must not: see request bodies, VINs, tokens or any other per-vehicle value. Labels are
 * bounded on purpose: a label value that comes from a client (a command name in the URL,
 * an error code) passes through `BoundedLabel`, which folds anything unknown — or anything
 * past a fixed number of distinct values — into `other`. Without that, a client could
 * create one time series per request and exhaust the proxy's (and Prometheus's) memory.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** The label value unknown or excess values are folded into. */
export const OTHER = 'other';

/** Label values must look like identifiers; anything else is folded into `other`. */
const LABEL_VALUE = /^[a-z][a-z0-9_]{0,63}$/;

/**
 * Bounds the set of values a label can take. With an allow-list only those values pass;
 * without one, the first `max` well-formed values pass and later new ones become `other`.
 */
export class BoundedLabel {
  private readonly seen = new Set<string>();
  constructor(
    private readonly allowed: ReadonlySet<string> | undefined,
    private readonly max: number,
  ) {}

  value(raw: string): string {
    if (this.allowed) return this.allowed.has(raw) ? raw : OTHER;
    if (!LABEL_VALUE.test(raw)) return OTHER;
    if (this.seen.has(raw)) return raw;
    if (this.seen.size >= this.max) return OTHER;
    this.seen.add(raw);
    return raw;
  }
}

/** Domain ids of the protocol (src/protocol/domains.ts) → label values. */
const DOMAIN_LABELS: Record<string, string> = {
  '2': 'vehicle_security',
  '3': 'infotainment',
  vehicle_security: 'vehicle_security',
  infotainment: 'infotainment',
};

/** `200` → `2xx`; `0` or anything outside 100..599 (network failure, timeout) → `error`. */
export function statusClass(status: number): string {
  if (!Number.isInteger(status) || status < 100 || status > 599) return 'error';
  return `${Math.floor(status / 100)}xx`;
}

export interface MetricsOptions {
  /**
   * The command names the proxy knows (pass `COMMANDS.map((c) => c.name)` from
   * src/commands). Other names are counted as `other`. Without it, the first 256
   * well-formed names are kept.
   */
  commandNames?: Iterable<string>;
  /** Also export prom-client's default process metrics (CPU, memory, event loop). */
  processMetrics?: boolean;
  /** Upstream latency buckets in seconds. */
  latencyBuckets?: number[];
}

export interface Metrics {
  /** The registry, for callers that want to add their own metrics. */
  readonly registry: Registry;
  /**
   * A command finished. `outcome` is `ok` or the stable VcpError code
   * (`vehicle_offline`, `may_have_executed`, …); both are bounded.
   */
  commandDone(name: string, outcome: string): void;
  /** A session handshake was sent to a domain (2 / 3 or its name). */
  handshake(domain: number | string): void;
  /** A session was resynchronized after the vehicle rejected a stale counter/clock. */
  resync(domain: number | string): void;
  /**
   * An upstream request finished. `route` is a small fixed class chosen by the caller
   * (`signed_command`, `rest_command`, `wake_up`, `passthrough`, …); `status` the HTTP
   * status, or 0 when there was no answer (network error, timeout).
   */
  upstream(route: string, status: number, seconds: number): void;
  /** Requests being handled right now. */
  readonly inflight: { inc(): void; dec(): void };
  /** A command went to the REST endpoint instead of being signed. */
  restFallback(name: string): void;
  /** The proxy answered 429 (its own limit or the upstream's). */
  rateLimited(): void;
  /** Reports the session cache size at scrape time. */
  setSessionCacheSizeSource(fn: () => number): void;
  /** The exposition text and its content type, for a `/metrics` answer. */
  render(): Promise<{ contentType: string; body: string }>;
  /** A web-standard `Response` for `/metrics` (Hono routes can return it as is). */
  response(): Promise<Response>;
}

const DEFAULT_BUCKETS = [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export function createMetrics(opts: MetricsOptions = {}): Metrics {
  const registry = new Registry();
  if (opts.processMetrics) collectDefaultMetrics({ register: registry, prefix: 'vcproxy_' });

  const commandNames = new BoundedLabel(
    opts.commandNames === undefined ? undefined : new Set(opts.commandNames),
    256,
  );
  const outcomes = new BoundedLabel(undefined, 64);
  const routes = new BoundedLabel(undefined, 32);
  const domain = (d: number | string): string => DOMAIN_LABELS[String(d)] ?? OTHER;

  const commands = new Counter({
    name: 'vcproxy_commands_total',
    help: 'Commands handled, by command name and outcome (ok or error code).',
    labelNames: ['command', 'outcome'] as const,
    registers: [registry],
  });
  const handshakes = new Counter({
    name: 'vcproxy_handshakes_total',
    help: 'Session handshakes sent to vehicles, by domain.',
    labelNames: ['domain'] as const,
    registers: [registry],
  });
  const resyncs = new Counter({
    name: 'vcproxy_resyncs_total',
    help: 'Session resynchronizations after a vehicle rejected a command, by domain.',
    labelNames: ['domain'] as const,
    registers: [registry],
  });
  const upstreamSeconds = new Histogram({
    name: 'vcproxy_upstream_request_duration_seconds',
    help: 'Latency of requests to the upstream service, by route class and status class.',
    labelNames: ['route', 'status_class'] as const,
    buckets: opts.latencyBuckets ?? DEFAULT_BUCKETS,
    registers: [registry],
  });
  // A plain number read at scrape time: two prom-client gauge updates per request cost
  // more than the request's own bookkeeping warrants.
  let inflightNow = 0;
  new Gauge({
    name: 'vcproxy_inflight_requests',
    help: 'Client requests being handled right now.',
    registers: [registry],
    collect() {
      this.set(inflightNow);
    },
  });
  let sessionCacheSize: (() => number) | undefined;
  new Gauge({
    name: 'vcproxy_session_cache_size',
    help: 'Vehicle sessions held in the session cache.',
    registers: [registry],
    collect() {
      // A failing source must not break the whole scrape; report nothing for this gauge.
      if (!sessionCacheSize) return;
      try {
        const n = sessionCacheSize();
        if (Number.isFinite(n)) this.set(n);
      } catch {
        /* ignore: a scrape must not fail because one source did */
      }
    },
  });
  const restFallbacks = new Counter({
    name: 'vcproxy_rest_fallbacks_total',
    help: 'Commands sent to the REST command endpoint instead of being signed, by command name.',
    labelNames: ['command'] as const,
    registers: [registry],
  });
  const rateLimitedAnswers = new Counter({
    name: 'vcproxy_rate_limited_total',
    help: 'Answers with status 429 (rate limited) returned to clients.',
    registers: [registry],
  });

  // Plain closures (no `this`) so callers may pass `metrics.response` unbound as a handler.
  const render = async (): Promise<{ contentType: string; body: string }> => ({
    contentType: registry.contentType,
    body: await registry.metrics(),
  });

  return {
    registry,
    commandDone(name, outcome) {
      commands.inc({ command: commandNames.value(name), outcome: outcomes.value(outcome) });
    },
    handshake(d) {
      handshakes.inc({ domain: domain(d) });
    },
    resync(d) {
      resyncs.inc({ domain: domain(d) });
    },
    upstream(route, status, seconds) {
      if (!Number.isFinite(seconds) || seconds < 0) return;
      upstreamSeconds.observe({ route: routes.value(route), status_class: statusClass(status) }, seconds);
    },
    inflight: {
      inc: () => void inflightNow++,
      dec: () => void inflightNow--,
    },
    restFallback(name) {
      restFallbacks.inc({ command: commandNames.value(name) });
    },
    rateLimited() {
      rateLimitedAnswers.inc();
    },
    setSessionCacheSizeSource(fn) {
      sessionCacheSize = fn;
    },
    render,
    async response() {
      const { contentType, body } = await render();
      return new Response(body, { status: 200, headers: { 'content-type': contentType } });
    },
  };
}
