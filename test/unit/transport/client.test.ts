import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { UpstreamClient } from '../../../src/transport/client.js';
import { VcpError } from '../../../src/protocol/errors.js';
import { AbortSource } from '../../../src/transport/abort.js';

const servers: Server[] = [];
const clients: UpstreamClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

async function serve(handler: Parameters<typeof createServer>[1]): Promise<{ origin: string; sockets: () => number }> {
  const s = createServer(handler);
  let sockets = 0;
  s.on('connection', () => sockets++);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  servers.push(s);
  return { origin: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, sockets: () => sockets };
}

function client(opts: ConstructorParameters<typeof UpstreamClient>[0] = {}): UpstreamClient {
  const c = new UpstreamClient(opts);
  clients.push(c);
  return c;
}

async function failure(p: Promise<unknown>): Promise<VcpError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  if (!(e instanceof VcpError)) throw new Error(`expected VcpError, got ${String(e)}`);
  return e;
}

describe('UpstreamClient', () => {
  it('sends method, path, headers and body, and reuses the connection', async () => {
    const seen: string[] = [];
    const { origin, sockets } = await serve((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        seen.push(`${req.method} ${req.url} ${req.headers['x-h']} ${body}`);
        res.writeHead(201, { 'x-r': 'v' });
        res.end('done');
      });
    });
    const c = client();
    for (let i = 0; i < 5; i++) {
      const r = await c.request({ origin, method: 'POST', path: '/a?b=1', headers: { 'x-h': 'y' }, body: 'B', deadline: Date.now() + 5000 });
      expect(r.status).toBe(201);
      expect(r.headers['x-r']).toBe('v');
      expect(r.body.toString()).toBe('done');
    }
    expect(seen).toEqual(Array.from({ length: 5 }, () => 'POST /a?b=1 y B'));
    // Keep-alive: sequential requests share sockets (undici may open a second one while the
    // first is still finishing its response).
    expect(sockets()).toBeLessThanOrEqual(2);
  });

  it('reports a refused connection as not sent', async () => {
    const { origin } = await serve(() => undefined);
    servers[0]!.close();
    const e = await failure(client().request({ origin, method: 'POST', path: '/', headers: {}, deadline: Date.now() + 5000 }));
    expect(e.code).toBe('upstream_unreachable');
    expect(e.mayHaveSucceeded).toBe(false);
  });

  it('reports a timeout after sending as possibly executed', async () => {
    const { origin } = await serve(() => undefined); // never answers
    const e = await failure(client().request({ origin, method: 'POST', path: '/', headers: {}, deadline: Date.now() + 200 }));
    expect(e.code).toBe('upstream_timeout');
    expect(e.status).toBe(504);
    expect(e.mayHaveSucceeded).toBe(true);
  });

  it('holds the deadline when headers arrive and the body stalls (undici backstop is far later)', async () => {
    const { origin } = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"response":"'); // then nothing more
    });
    const started = Date.now();
    const e = await failure(client({ backstopTimeoutMs: 60_000 }).request({ origin, method: 'POST', path: '/', headers: {}, body: 'x', deadline: Date.now() + 300 }));
    expect(e.code).toBe('upstream_timeout');
    expect(e.mayHaveSucceeded).toBe(true);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('reports a dropped connection as possibly executed', async () => {
    const { origin } = await serve((req) => req.socket.destroy());
    const e = await failure(client().request({ origin, method: 'POST', path: '/', headers: {}, body: 'x', deadline: Date.now() + 5000 }));
    expect(e.code).toBe('upstream_connection_lost');
    expect(e.mayHaveSucceeded).toBe(true);
  });

  it('refuses oversized answers, declared or streamed', async () => {
    const { origin } = await serve((req, res) => {
      if (req.url === '/declared') {
        res.writeHead(200, { 'content-length': '5000' });
        res.end('x'.repeat(5000));
      } else {
        res.writeHead(200);
        res.write('x'.repeat(3000));
        res.end('y'.repeat(3000));
      }
    });
    const c = client({ maxResponseBytes: 4096 });
    for (const path of ['/declared', '/chunked']) {
      const e = await failure(c.request({ origin, method: 'GET', path, headers: {}, deadline: Date.now() + 5000 }));
      expect(e.code).toBe('upstream_response_too_large');
    }
  });

  it('cuts a request in flight when the client goes away (light abort source as undici signal)', async () => {
    let arrived!: () => void;
    const seen = new Promise<void>((r) => (arrived = r));
    const { origin } = await serve(() => arrived()); // receives, never answers
    const gone = new AbortSource();
    const started = Date.now();
    const pending = failure(client().request({ origin, method: 'POST', path: '/', headers: {}, body: 'x', deadline: Date.now() + 30_000, signal: gone }));
    await seen;
    gone.abort();
    const e = await pending;
    expect(e.code).toBe('client_closed_request');
    // Cut by the abort, not by the 30 s budget.
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('does not send once the client has gone or the budget is spent', async () => {
    let hits = 0;
    const { origin } = await serve((_req, res) => {
      hits++;
      res.end();
    });
    const ac = new AbortController();
    ac.abort();
    const c = client();
    expect((await failure(c.request({ origin, method: 'POST', path: '/', headers: {}, deadline: Date.now() + 5000, signal: ac.signal }))).code).toBe(
      'client_closed_request',
    );
    const late = await failure(c.request({ origin, method: 'POST', path: '/', headers: {}, deadline: Date.now() - 1 }));
    expect(late.mayHaveSucceeded).toBe(false);
    expect(hits).toBe(0);
  });
});
