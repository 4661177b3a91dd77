/**
 * The node-level command fast path (src/http/node.ts) and the Hono command route share one
 * core; these tests hold them to the same answers on a real socket vs `app.request`, and
 * check that the fast path keeps the Hono middlewares' duties (access log, request id,
 * body limit, everything else still routed through Hono).
 */
import { Writable } from 'node:stream';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig, type ProxyConfig } from '../../src/config.js';
import { startProxy, type RunningProxy } from '../../src/cli/serve.js';
import { createLogger } from '../../src/log.js';
import { loadKeyFile } from '../../src/keys/index.js';
import { startSim, DEFAULT_FLEET_VINS, type RunningSim } from '../../src/sim/index.js';
import { exampleKeyFile, fakeJwt } from './proxy-fake-upstream.js';

const VIN: string = DEFAULT_FLEET_VINS.modern;
const TOKEN = fakeJwt({ sub: 'fast-path' });
const LIMIT = 1024;
let keyFile: { path: string; cleanup(): Promise<void> };
let sim: RunningSim;
let proxy: RunningProxy;
let logText = '';

beforeAll(async () => {
  keyFile = await exampleKeyFile();
  const publicKey = loadKeyFile(keyFile.path).publicKey;
  sim = await startSim({ port: 0, enroll: [{ publicKey, role: 'owner' }], timeScale: 1000, limits: false });
  const cfg = parseConfig(
    ['--key', keyFile.path, '--port', '0', '--upstream', sim.url, '--timeout', '15s', '--max-body-bytes', String(LIMIT), '--log-level', 'info'],
    {},
  ) as ProxyConfig;
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      logText += chunk.toString();
      cb();
    },
  });
  proxy = await startProxy(cfg, { logger: createLogger({ level: 'info', destination: sink }), probe: false, sleep: async () => undefined });
});
afterAll(async () => {
  await proxy.close();
  await sim.close();
  await keyFile.cleanup();
});

interface Answer {
  status: number;
  body: string;
  contentType: string | null;
  wwwAuthenticate: string | null;
  allow: string | null;
  requestId: string | null;
}

async function viaSocket(method: string, path: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  const r = await fetch(proxy.url + path, { method, headers, ...(body === undefined ? {} : { body }) });
  return answer(r);
}
async function viaApp(method: string, path: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  const r = await proxy.parts.app.request(path, { method, headers, ...(body === undefined ? {} : { body }) });
  return answer(r);
}
async function answer(r: Response): Promise<Answer> {
  return {
    status: r.status,
    body: await r.text(),
    contentType: r.headers.get('content-type'),
    wwwAuthenticate: r.headers.get('www-authenticate'),
    allow: r.headers.get('allow'),
    requestId: r.headers.get('x-request-id'),
  };
}

const json = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };

describe('command fast path vs the Hono route', () => {
  const cases: Array<[string, string, Record<string, string>, string | undefined]> = [
    ['a signed command', `/api/1/vehicles/${VIN}/command/flash_lights`, json, '{}'],
    ['a validation error', `/api/1/vehicles/${VIN}/command/set_charge_limit`, json, '{"percent":"lots"}'],
    ['invalid JSON', `/api/1/vehicles/${VIN}/command/set_charge_limit`, json, '{"percent":'],
    ['a bad VIN', '/api/1/vehicles/12345/command/flash_lights', json, '{}'],
    ['no token', `/api/1/vehicles/${VIN}/command/flash_lights`, { 'content-type': 'application/json' }, '{}'],
    ['an unknown command', `/api/1/vehicles/${VIN}/command/launch_rocket`, json, '{}'],
    ['an over-limit body', `/api/1/vehicles/${VIN}/command/set_charge_limit`, json, JSON.stringify({ percent: 80, pad: 'x'.repeat(LIMIT) })],
  ];
  for (const [label, path, headers, body] of cases) {
    it(`gives the same answer for ${label}`, async () => {
      const sock = await viaSocket('POST', path, { ...headers, 'x-request-id': 'fast-1' }, body);
      const app = await viaApp('POST', path, { ...headers, 'x-request-id': 'fast-1' }, body);
      expect(sock).toEqual(app);
      expect(sock.requestId).toBe('fast-1');
    });
  }

  it('answers the signed command with the vehicle result', async () => {
    const sock = await viaSocket('POST', `/api/1/vehicles/${VIN}/command/flash_lights`, json, '{}');
    expect(sock.status).toBe(200);
    expect(JSON.parse(sock.body)).toEqual({ response: { result: true, reason: '' } });
    expect(sock.requestId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('declares Content-Length on its answers instead of chunked framing (local, error and relayed)', async () => {
    const raw = (path: string, body: string): Promise<{ status: number; length: string | undefined; chunked: boolean; bytes: number }> =>
      new Promise((resolve, reject) => {
        const req = httpRequest(`${proxy.url}${path}`, { method: 'POST', headers: { ...json, 'content-length': String(body.length) } }, (r) => {
          const chunks: Buffer[] = [];
          r.on('data', (d: Buffer) => chunks.push(d));
          r.on('end', () =>
            resolve({
              status: r.statusCode ?? 0,
              length: r.headers['content-length'],
              chunked: /chunked/i.test(String(r.headers['transfer-encoding'] ?? '')),
              bytes: Buffer.concat(chunks).length,
            }),
          );
        });
        req.on('error', reject);
        req.end(body);
      });
    const signed = await raw(`/api/1/vehicles/${VIN}/command/flash_lights`, '{}');
    const refused = await raw(`/api/1/vehicles/${VIN}/command/set_charge_limit`, '{"percent":"x"}');
    const relayed = await raw(`/api/1/vehicles/${VIN}/command/remote_steering_wheel_heat_level_request`, '{"level":1}');
    expect([signed.status, refused.status, relayed.status]).toEqual([200, 400, 200]);
    for (const a of [signed, refused, relayed]) {
      expect(a.chunked).toBe(false);
      expect(a.length).toBe(String(a.bytes));
    }
  });

  it('refuses a chunked body over the limit with 413 and closes the connection', async () => {
    const res = await new Promise<{ status: number; connection: string | undefined; body: string }>((resolve, reject) => {
      const req = httpRequest(`${proxy.url}/api/1/vehicles/${VIN}/command/set_charge_limit`, { method: 'POST', headers: json }, (r) => {
        let body = '';
        r.setEncoding('utf8');
        r.on('data', (d: string) => (body += d));
        r.on('end', () => resolve({ status: r.statusCode ?? 0, connection: r.headers.connection, body }));
      });
      req.on('error', reject);
      // No Content-Length: node sends it chunked; the limit is only known while reading.
      req.write('{"percent":80,"pad":"');
      req.write('y'.repeat(LIMIT));
      req.end('"}');
    });
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body).error).toBe('request_too_large');
    expect(res.connection).toBe('close');
  });

  it('writes one access-log line per command with the route pattern and outcome', async () => {
    const before = logText.split('\n').filter((l) => l.includes('"fast-log-1"')).length;
    expect(before).toBe(0);
    await viaSocket('POST', `/api/1/vehicles/${VIN}/command/set_charge_limit`, { ...json, 'x-request-id': 'fast-log-1' }, '{"percent":"x"}');
    const lines = logText
      .split('\n')
      .filter((l) => l.includes('"fast-log-1"'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      msg: 'request',
      method: 'POST',
      route: '/api/1/vehicles/:vin/command/:name',
      status: 400,
      vin: VIN,
      command: 'set_charge_limit',
      outcome: 'invalid_request',
    });
    expect(logText).not.toContain(TOKEN);
  });

  it('leaves other routes and other methods to Hono', async () => {
    const health = await viaSocket('GET', '/health', {});
    expect(health.status).toBe(200);
    expect(health.body).toBe('OK');
    expect(health.requestId).not.toBeNull();
    const get = await viaSocket('GET', `/api/1/vehicles/${VIN}/command/flash_lights`, json);
    expect(get).toEqual({ ...(await viaApp('GET', `/api/1/vehicles/${VIN}/command/flash_lights`, json)), requestId: get.requestId });
    expect(get.status).toBe(405);
    expect(get.allow).toBe('POST');
  });
});

describe('command fast path: client disconnect', () => {
  it('aborts the upstream call when the client goes away, and logs one line for it', async () => {
    // An upstream that receives the handshake request and never answers.
    let onUpstream!: () => void;
    let onUpstreamClosed!: () => void;
    const arrived = new Promise<void>((r) => (onUpstream = r));
    const upstreamClosed = new Promise<void>((r) => (onUpstreamClosed = r));
    const hanging = createServer((req) => {
      req.resume();
      req.socket.once('close', onUpstreamClosed);
      onUpstream();
    });
    await new Promise<void>((r) => hanging.listen(0, '127.0.0.1', r));
    const port = (hanging.address() as AddressInfo).port;
    let lines = '';
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        lines += chunk.toString();
        cb();
      },
    });
    const cfg = parseConfig(
      ['--key', keyFile.path, '--port', '0', '--upstream', `http://127.0.0.1:${port}`, '--timeout', '60s', '--log-level', 'info'],
      {},
    ) as ProxyConfig;
    const p2 = await startProxy(cfg, { logger: createLogger({ level: 'info', destination: sink }), probe: false, sleep: async () => undefined });
    try {
      const ac = new AbortController();
      const pending = fetch(`${p2.url}/api/1/vehicles/${VIN}/command/flash_lights`, {
        method: 'POST',
        headers: { ...json, 'x-request-id': 'fast-abort-1' },
        body: '{}',
        signal: ac.signal,
      }).catch((e: unknown) => e);
      await arrived;
      ac.abort();
      await pending;
      // The proxy's upstream connection is torn down long before the 60 s budget.
      await upstreamClosed;
      // The access line is written once the core has unwound.
      for (let i = 0; i < 200 && !lines.includes('"fast-abort-1"'); i++) await new Promise((r) => setTimeout(r, 10));
      const mine = lines
        .split('\n')
        .filter((l) => l.includes('"fast-abort-1"'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(mine).toHaveLength(1);
      expect(mine[0]).toMatchObject({ msg: 'request', route: '/api/1/vehicles/:vin/command/:name', outcome: 'client_closed_request' });
    } finally {
      await p2.close();
      await new Promise<void>((r) => hanging.close(() => r()));
    }
  });
});
