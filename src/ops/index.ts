/**
 * Operability pieces the proxy's HTTP layer plugs in: Prometheus metrics (`vcproxy_*`),
 * readiness state for `/ready`, a start-up upstream probe, graceful shutdown of the node
 * server, a Hono middleware and a separate metrics-port server.
 *
 * Must not: hold protocol state, see secrets (nothing here takes a request body, token or
 * key), read process.env, exit the process or start listening on its own. The CLI and the
 * HTTP app own those decisions; src/ops/README.md lists the exact wiring calls.
 */
export { createMetrics, statusClass, BoundedLabel, OTHER } from './metrics.js';
export type { Metrics, MetricsOptions } from './metrics.js';
export { Readiness, gracefulShutdown, probeUpstream } from './lifecycle.js';
export type {
  ReadinessCheck,
  ReadinessSnapshot,
  ShutdownHandle,
  ShutdownOptions,
  ShutdownResult,
  SignalSource,
  ProbeResult,
} from './lifecycle.js';
export { metricsMiddleware } from './hono.js';
export { createOpsServer } from './server.js';
export { instrumentUpstream, routeClass } from './upstream.js';
