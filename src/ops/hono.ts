/**
 * Hono glue for the ops pieces, kept apart from metrics.ts so the metrics module does not
 * depend on the web framework. Type-only import: nothing here loads Hono at run time.
 */
import type { MiddlewareHandler } from 'hono';
import type { Metrics } from './metrics.js';

/**
 * Counts in-flight requests and 429 answers. Mount it first (`app.use('*', …)`) so it
 * sees the final status, including answers produced by `app.onError`. When it is mounted,
 * do not also call `metrics.rateLimited()` for the same answers.
 */
export function metricsMiddleware(metrics: Metrics): MiddlewareHandler {
  return async (c, next) => {
    metrics.inflight.inc();
    try {
      await next();
    } finally {
      metrics.inflight.dec();
      if (c.res.status === 429) metrics.rateLimited();
    }
  };
}
