/**
 * Upstream latency metrics as a decorator around the transport's `Upstream`, so neither
 * the transport nor the session layer needs to know about Prometheus. Wrap the client once
 * where the proxy is built; every request (handshakes, signed commands, REST forwards) is
 * then timed by route class and status class.
 */
import type { Upstream, UpstreamRequest } from '../transport/client.js';
import type { Metrics } from './metrics.js';

/**
 * A small fixed set of route classes from the request path (never the path itself: it
 * holds VINs and ids, which would explode the label's cardinality).
 */
export function routeClass(path: string): string {
  // String tests, not a chain of regular expressions: this runs on every upstream call.
  const q = path.indexOf('?');
  const p = q < 0 ? path : path.slice(0, q);
  if (p.endsWith('/signed_command')) return 'signed_command';
  if (p.endsWith('/wake_up')) return 'wake_up';
  const last = p.lastIndexOf('/');
  if (last >= 0 && last < p.length - 1 && p.slice(0, last).endsWith('/command')) return 'rest_command';
  if (p.endsWith('/fleet_telemetry_config') || p.endsWith('/fleet_telemetry_config_jws')) return 'telemetry_config';
  if (p.endsWith('/vehicle_data')) return 'vehicle_data';
  return 'passthrough';
}

export interface InstrumentOptions {
  /** Monotonic clock in ms; injected for tests. Default `performance.now`. */
  now?: () => number;
}

export function instrumentUpstream(upstream: Upstream, metrics: Metrics, opts: InstrumentOptions = {}): Upstream {
  const now = opts.now ?? (() => performance.now());
  return {
    async request(req: UpstreamRequest) {
      const start = now();
      const route = routeClass(req.path);
      try {
        const res = await upstream.request(req);
        metrics.upstream(route, res.status, (now() - start) / 1000);
        return res;
      } catch (err) {
        // No answer (network error, timeout, abort): status class "error".
        metrics.upstream(route, 0, (now() - start) / 1000);
        throw err;
      }
    },
    close: () => upstream.close(),
  };
}
