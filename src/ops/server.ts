/**
 * A minimal plain-HTTP server for `--metrics-port`: `/metrics`, `/health`, `/ready` only,
 * so scrapers and orchestrator probes can reach them without exposing the command API
 * (and without a TLS client certificate dance). Returned unstarted: the CLI calls
 * `listen` (only src/cli/* start servers).
 */
import { createServer, type Server } from 'node:http';
import type { Metrics } from './metrics.js';
import type { Readiness } from './lifecycle.js';

export interface OpsServerOptions {
  metrics: Metrics;
  readiness?: Readiness;
}

export function createOpsServer(opts: OpsServerOptions): Server {
  return createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const send = (status: number, type: string, body: string): void => {
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET, HEAD');
      send(405, 'text/plain; charset=utf-8', 'method not allowed\n');
      return;
    }
    if (path === '/metrics') {
      opts.metrics.render().then(
        ({ contentType, body }) => send(200, contentType, body),
        () => send(500, 'text/plain; charset=utf-8', 'metrics unavailable\n'),
      );
      return;
    }
    if (path === '/health') {
      send(200, 'text/plain; charset=utf-8', 'ok');
      return;
    }
    if (path === '/ready' && opts.readiness) {
      const snap = opts.readiness.snapshot();
      send(snap.ready ? 200 : 503, 'application/json', JSON.stringify(snap));
      return;
    }
    send(404, 'text/plain; charset=utf-8', 'not found\n');
  });
}
