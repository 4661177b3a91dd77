import type { AddressInfo } from 'node:net';
import { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { createMetrics } from '../../../src/ops/metrics.js';
import { Readiness } from '../../../src/ops/lifecycle.js';
import { createOpsServer } from '../../../src/ops/server.js';
import { metricsMiddleware } from '../../../src/ops/hono.js';
import type { Server } from 'node:http';

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }
});

describe('createOpsServer', () => {
  it('serves /metrics, /health and /ready and nothing else', async () => {
    const metrics = createMetrics();
    metrics.rateLimited();
    const readiness = new Readiness();
    const server = createOpsServer({ metrics, readiness });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    const m = await fetch(`${base}/metrics`);
    expect(m.status).toBe(200);
    expect(await m.text()).toContain('vcproxy_rate_limited_total 1');
    expect((await fetch(`${base}/health`)).status).toBe(200);
    expect((await fetch(`${base}/ready`)).status).toBe(503);
    readiness.set('keyLoaded', true).set('listening', true).set('upstreamReachable', true);
    const ready = await fetch(`${base}/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ ready: true });
    expect((await fetch(`${base}/api/1/vehicles`)).status).toBe(404);
    expect((await fetch(`${base}/metrics`, { method: 'POST' })).status).toBe(405);
  });
});

describe('metricsMiddleware', () => {
  it('counts in-flight requests and 429 answers, also from onError', async () => {
    const metrics = createMetrics();
    const app = new Hono();
    app.use('*', metricsMiddleware(metrics));
    let seenInflight = -1;
    app.get('/busy', async (c) => {
      const body = (await metrics.render()).body;
      seenInflight = Number(/^vcproxy_inflight_requests (\S+)$/m.exec(body)?.[1]);
      return c.text('ok');
    });
    app.get('/limited', (c) => c.text('slow down', 429));
    app.get('/throws', () => {
      throw new Error('limited');
    });
    app.onError((_err, c) => c.text('limited', 429));

    expect((await app.request('/busy')).status).toBe(200);
    expect(seenInflight).toBe(1);
    expect((await app.request('/limited')).status).toBe(429);
    expect((await app.request('/throws')).status).toBe(429);
    const body = (await metrics.render()).body;
    expect(body).toMatch(/^vcproxy_rate_limited_total 2$/m);
    expect(body).toMatch(/^vcproxy_inflight_requests 0$/m);
  });
});
