import { execFileSync } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent as HttpsAgent, createServer as createHttpsServer, request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, request, Agent, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Readiness, gracefulShutdown, probeUpstream, type SignalSource } from '../../../src/ops/lifecycle.js';
import { hasOpenssl, tryConnect } from '../../support/net.js';

/** A deferred: a promise plus its resolve, so tests release handlers without timers. */
function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

const servers: Server[] = [];
const agents: Agent[] = [];

afterEach(() => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    if (s.listening) s.close();
  }
  for (const a of agents.splice(0)) a.destroy();
});

/**
 * A loopback server whose `/slow` requests wait until the test releases them; `entered`
 * resolves when a slow request has reached the handler.
 */
async function startServer(): Promise<{
  server: Server;
  port: number;
  entered: Promise<void>;
  release: () => void;
}> {
  const entered = deferred();
  const gate = deferred();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.url === '/slow') {
      entered.resolve();
      void gate.promise.then(() => res.end('slow done'));
      return;
    }
    res.end('fast');
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return { server, port, entered: entered.promise, release: () => gate.resolve() };
}

function get(
  port: number,
  path: string,
  agent?: Agent,
): Promise<{ status: number; body: string; headers: IncomingMessage['headers'] }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent: agent ?? false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

function fakeSignals(): EventEmitter & SignalSource {
  return new EventEmitter() as EventEmitter & SignalSource;
}

describe('gracefulShutdown', () => {
  it('lets an in-flight request finish, refuses new connections, then resolves', async () => {
    const { server, port, entered, release } = await startServer();
    const signals = fakeSignals();
    const readiness = new Readiness().set('keyLoaded', true).set('listening', true).set('upstreamReachable', true);
    let closedHookRan = false;
    const handle = gracefulShutdown(server, {
      signals,
      readiness,
      graceMs: 60_000,
      onClosed: () => {
        closedHookRan = true;
      },
    });
    expect(readiness.snapshot().ready).toBe(true);

    const slow = get(port, '/slow');
    await entered;
    expect(handle.inflight()).toBe(1);

    signals.emit('SIGTERM');
    expect(readiness.snapshot()).toMatchObject({ ready: false, draining: true });
    expect(await tryConnect(port)).toBe('ECONNREFUSED');

    release();
    const res = await slow;
    expect(res).toMatchObject({ status: 200, body: 'slow done' });
    const result = await handle.done;
    expect(result).toEqual({ reason: 'SIGTERM', forced: false, abandoned: 0 });
    expect(closedHookRan).toBe(true);
    expect(server.listening).toBe(false);
    expect(signals.listenerCount('SIGTERM')).toBe(0);
  });

  it('cuts requests still running when the grace period ends', async () => {
    const { server, port, entered } = await startServer();
    const handle = gracefulShutdown(server, { signals: null, graceMs: 20 });
    const slow = get(port, '/slow').then(
      () => 'answered',
      (err: NodeJS.ErrnoException) => err.code ?? 'error',
    );
    await entered;
    const result = await handle.shutdown('test');
    expect(result).toEqual({ reason: 'test', forced: true, abandoned: 1 });
    expect(await slow).toBe('ECONNRESET');
  });

  it('closes idle keep-alive connections instead of waiting for the grace period', async () => {
    const { server, port } = await startServer();
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    agents.push(agent);
    const handle = gracefulShutdown(server, { signals: null, graceMs: 60_000 });
    expect((await get(port, '/fast', agent)).body).toBe('fast');
    // The agent now holds an idle keep-alive socket to the server.
    expect(Object.keys(agent.freeSockets).length).toBe(1);
    const result = await handle.shutdown();
    expect(result.forced).toBe(false);
  });

  it('closes a busy keep-alive connection once its response ends', async () => {
    const { server, port, entered, release } = await startServer();
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    agents.push(agent);
    const handle = gracefulShutdown(server, { signals: null, graceMs: 60_000 });

    // Warm the keep-alive socket, then start a slow request on it.
    await get(port, '/fast', agent);
    const slow = get(port, '/slow', agent);
    await entered;
    const finished = handle.shutdown();
    // The socket is busy, so draining cannot close it yet; once the response ends it is
    // idle and must be closed, otherwise shutdown would wait for the 60 s grace period
    // (and this test would time out).
    release();
    const res = await slow;
    expect(res.body).toBe('slow done');
    expect((await finished).forced).toBe(false);
  });

  it.skipIf(!hasOpenssl())('works the same for an https.Server with keep-alive clients', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vcproxy-lifecycle-tls-'));
    try {
      execFileSync('openssl', [
        'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1',
        '-subj', '/CN=localhost', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
      ], { stdio: 'ignore' });
      const entered = deferred();
      const gate = deferred();
      const server = createHttpsServer(
        { cert: readFileSync(join(dir, 'cert.pem')), key: readFileSync(join(dir, 'key.pem')) },
        (req, res) => {
          if (req.url === '/slow') {
            entered.resolve();
            void gate.promise.then(() => res.end('slow done'));
            return;
          }
          res.end('fast');
        },
      );
      servers.push(server);
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      const port = (server.address() as AddressInfo).port;
      const agent = new HttpsAgent({ keepAlive: true, maxSockets: 2, rejectUnauthorized: false });
      const tlsGet = (path: string): Promise<string> =>
        new Promise((resolve, reject) => {
          const r = httpsRequest({ host: '127.0.0.1', port, path, agent }, (res) => {
            let body = '';
            res.on('data', (c: Buffer) => (body += c.toString()));
            res.on('end', () => resolve(body));
          });
          r.on('error', reject);
          r.end();
        });
      const handle = gracefulShutdown(server, { signals: null, graceMs: 60_000 });
      expect(await tlsGet('/fast')).toBe('fast'); // leaves an idle keep-alive TLS socket
      const slow = tlsGet('/slow');
      await entered.promise;
      const finished = handle.shutdown();
      gate.resolve();
      expect(await slow).toBe('slow done');
      expect((await finished).forced).toBe(false);
      agent.destroy();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a second signal while draining cuts at once', async () => {
    const { server, port, entered } = await startServer();
    const signals = fakeSignals();
    const handle = gracefulShutdown(server, { signals, graceMs: 60_000 });
    const slow = get(port, '/slow').catch(() => 'cut');
    await entered;
    signals.emit('SIGINT');
    signals.emit('SIGINT');
    expect(await handle.done).toEqual({ reason: 'SIGINT', forced: true, abandoned: 1 });
    expect(await slow).toBe('cut');
  });

  it('is idempotent and works on a server that never listened', async () => {
    const server = createServer();
    const handle = gracefulShutdown(server, { signals: null });
    const a = handle.shutdown('one');
    const b = handle.shutdown('two');
    expect(a).toBe(b);
    expect(await a).toEqual({ reason: 'one', forced: false, abandoned: 0 });
  });

  it('dispose removes the signal listeners', () => {
    const server = createServer();
    const signals = fakeSignals();
    const handle = gracefulShutdown(server, { signals });
    expect(signals.listenerCount('SIGTERM')).toBe(1);
    expect(signals.listenerCount('SIGINT')).toBe(1);
    handle.dispose();
    expect(signals.listenerCount('SIGTERM')).toBe(0);
    expect(signals.listenerCount('SIGINT')).toBe(0);
  });
});

describe('Readiness', () => {
  it('is ready only when every check passes and it is not draining', async () => {
    const r = new Readiness();
    expect(r.snapshot()).toEqual({
      ready: false,
      draining: false,
      checks: { keyLoaded: false, listening: false, upstreamReachable: false },
    });
    r.set('keyLoaded', true).set('listening', true);
    expect(r.snapshot().ready).toBe(false);
    expect(r.response().status).toBe(503);
    r.set('upstreamReachable', true);
    expect(r.snapshot().ready).toBe(true);
    const ok = r.response();
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ ready: true });
    r.markDraining();
    expect(r.snapshot().ready).toBe(false);
    expect(r.response().status).toBe(503);
  });
});

describe('probeUpstream', () => {
  it('counts any HTTP answer as reachable', async () => {
    const server = createServer((_req, res) => {
      res.statusCode = 404;
      res.end('nope');
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    expect(await probeUpstream(`http://127.0.0.1:${port}/status`)).toEqual({ reachable: true, status: 404 });
  });

  it('reports a refused connection as unreachable', async () => {
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    await new Promise<void>((r) => server.close(() => r()));
    const result = await probeUpstream(`http://127.0.0.1:${port}/status`);
    expect(result).toEqual({ reachable: false, error: 'ECONNREFUSED' });
  });

  it('reports a timeout as unreachable', async () => {
    const hang: typeof fetch = (_url, init) =>
      new Promise((_resolve, reject) => {
        init?.signal?.addEventListener('abort', () => reject(init.signal?.reason));
      });
    expect(await probeUpstream('http://upstream.invalid/status', { fetch: hang, timeoutMs: 5 })).toEqual({
      reachable: false,
      error: 'timeout',
    });
  });
});
