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
  const p = path.split('?')[0] ?? '';
  if (/\/signed_command$/.test(p)) return 'signed_command';
  if (/\/wake_up$/.test(p)) return 'wake_up';
  if (/\/command\/[^/]+$/.test(p)) return 'rest_command';
  if (/\/fleet_telemetry_config(_jws)?$/.test(p)) return 'telemetry_config';
  if (/\/vehicle_data$/.test(p)) return 'vehicle_data';
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
