/**
 * The Hono app in process (`app.request`): gatekeeping, envelopes, result shaping and
 * relaying, with a recording fake upstream and dispatcher.
 */
import { describe, expect, it } from 'vitest';
import { createProxyApp, type Catalogue } from '../../../src/http/app.js';
import { VcpError } from '../../../src/protocol/errors.js';
import { UpstreamRouter } from '../../../src/transport/upstream.js';
import type { Upstream, UpstreamRequest, UpstreamResponse } from '../../../src/transport/client.js';
import type { CommandDispatcher, DispatchOutcome, SignedCommandRequest } from '../../../src/session/types.js';
import type { CommandKey } from '../../../src/crypto/types.js';

const VIN = '5YJ3E1EA7KF000001';
const AUTH = { authorization: 'Bearer tok', 'content-type': 'application/json' };

function setup(outcome: DispatchOutcome | Error = { kind: 'result', result: true, reason: '' }) {
  const calls: UpstreamRequest[] = [];
  let answer: UpstreamResponse = { status: 200, headers: { 'content-type': 'text/plain', connection: 'close', 'x-a': ['1', '2'] }, body: Buffer.from('hi') };
  const upstream: Upstream = {
    request: async (r) => {
      calls.push(r);
      return answer;
    },
    close: async () => undefined,
  };
  const executed: SignedCommandRequest[] = [];
  const dispatcher: CommandDispatcher = {
    execute: async (r) => {
      executed.push(r);
      if (outcome instanceof Error) throw outcome;
      return outcome;
    },
    isUnsupported: () => false,
  };
  const catalogue: Catalogue = {
    planCommand: (name, body) => {
      if (name === 'door_lock') return { ok: true, plan: { kind: 'signed', domain: 2, payload: new Uint8Array([1]) } };
      if (name === 'boom') return { ok: true, plan: { kind: 'rest' } };
      if (name === 'needs_x' && (body as { x?: unknown }).x === undefined) {
        return { ok: false, error: new VcpError('invalid_request', 'bad', { status: 400, messages: { x: ['required'] } }) };
      }
      return { ok: false, error: new VcpError('invalid_command', 'unknown', { status: 400 }) };
    },
    openApiDocument: () => ({ openapi: '3.1.0' }),
  };
  const key = { publicKey: new Uint8Array(65), sharedSecretX: () => new Uint8Array(32), signJws: () => new Uint8Array(96) } as CommandKey;
  const app = createProxyApp({
    config: { upstream: 'http://up.test', allowedUpstreams: [], timeoutMs: 5000, maxBodyBytes: 100 },
    key,
    catalogue,
    upstream,
    router: new UpstreamRouter({ fixed: 'http://up.test', allowed: [] }),
    dispatcher,
  });
  return { app, calls, executed, setAnswer: (a: UpstreamResponse) => (answer = a) };
}

describe('proxy app', () => {
  it('answers /health, /status and the catalogue without a token', async () => {
    const { app, calls } = setup();
    expect((await app.request('/health')).status).toBe(200);
    expect(await (await app.request('/status')).text()).toBe('ok');
    expect(await (await app.request('/openapi.json')).json()).toEqual({ openapi: '3.1.0' });
    expect(await (await app.request('/api/1/commands')).json()).toEqual({ openapi: '3.1.0' });
    expect(calls).toHaveLength(0);
  });

  it('gates commands: 401 without a token, 405 for GET, 404 for a bad VIN, catalogue errors as envelopes', async () => {
    const { app, calls, executed } = setup();
    const r401 = await app.request(`/api/1/vehicles/${VIN}/command/door_lock`, { method: 'POST' });
    expect(r401.status).toBe(401);
    expect(await r401.json()).toMatchObject({ response: null, error: 'unauthorized' });
    expect((await app.request(`/api/1/vehicles/${VIN}/command/door_lock`, { headers: AUTH })).status).toBe(405);
    const r404 = await app.request(`/api/1/vehicles/1234/command/door_lock`, { method: 'POST', headers: AUTH });
    expect(r404.status).toBe(404);
    const bad = await app.request(`/api/1/vehicles/${VIN}/command/needs_x`, { method: 'POST', headers: AUTH, body: '{}' });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ response: null, error: 'invalid_request', error_description: 'bad', messages: { x: ['required'] } });
    const big = await app.request(`/api/1/vehicles/${VIN}/command/door_lock`, { method: 'POST', headers: AUTH, body: 'x'.repeat(101) });
    expect(big.status).toBe(413);
    expect(calls).toHaveLength(0);
    expect(executed).toHaveLength(0);
  });

  it("shapes the dispatcher's result like the service", async () => {
    const ok = setup();
    const r = await ok.app.request(`/api/1/vehicles/${VIN}/command/door_lock`, { method: 'POST', headers: AUTH });
    expect(await r.json()).toEqual({ response: { result: true, reason: '' } });
    expect(ok.executed[0]).toMatchObject({ vin: VIN, domain: 2, authorization: 'Bearer tok' });
    const no = setup({ kind: 'result', result: false, reason: 'not_charging' });
    const r2 = await no.app.request(`/api/1/vehicles/${VIN}/command/door_lock`, { method: 'POST', headers: AUTH });
    expect(r2.status).toBe(200);
    expect(await r2.json()).toEqual({ response: { result: false, reason: 'not_charging' } });
  });

  it('maps VcpErrors to envelopes with their headers, and hides unexpected errors', async () => {
    const e = setup(new VcpError('vehicle_busy', 'busy, retry', { status: 503, headers: { 'retry-after': '1' } }));
    const r = await e.app.request(`/api/1/vehicles/${VIN}/command/door_lock`, { method: 'POST', headers: AUTH });
    expect(r.status).toBe(503);
    expect(r.headers.get('retry-after')).toBe('1');
    expect(await r.json()).toEqual({ response: null, error: 'vehicle_busy', error_description: 'busy, retry' });
    const u = setup(new Error('secret internals at /etc/key.pem'));
    const r2 = await u.app.request(`/api/1/vehicles/${VIN}/command/door_lock`, { method: 'POST', headers: AUTH });
    expect(r2.status).toBe(500);
    const text = await r2.text();
    expect(JSON.parse(text)).toMatchObject({ response: null, error: 'internal_error' });
    expect(text).not.toContain('secret');
  });

  it('relays upstream answers without hop-by-hop headers and keeps repeated headers', async () => {
    const { app, calls } = setup();
    const r = await app.request('/api/1/products?x=1', { headers: { authorization: 'Bearer tok', te: 'trailers', 'x-keep': 'k' } });
    expect(r.status).toBe(200);
    expect(await r.text()).toBe('hi');
    expect(r.headers.get('connection')).toBeNull();
    expect(r.headers.get('x-a')).toBe('1, 2');
    expect(calls[0]).toMatchObject({ origin: 'http://up.test', method: 'GET', path: '/api/1/products?x=1' });
    expect(calls[0]!.headers['te']).toBeUndefined();
    expect(calls[0]!.headers['x-keep']).toBe('k');
    expect(calls[0]!.body).toBeUndefined();
  });

  it('relays 204 without a body', async () => {
    const s = setup();
    s.setAnswer({ status: 204, headers: {}, body: Buffer.alloc(0) });
    const r = await s.app.request('/api/1/vehicles/1/fleet_telemetry_config', { method: 'DELETE', headers: { authorization: 'Bearer tok' } });
    expect(r.status).toBe(204);
  });

  it('forwards REST-only commands with the original bytes', async () => {
    const { app, calls } = setup();
    const body = '{ "a" :1 }';
    await app.request(`/api/1/vehicles/${VIN}/command/boom?q=1`, { method: 'POST', headers: AUTH, body });
    expect(calls[0]).toMatchObject({ method: 'POST', path: `/api/1/vehicles/${VIN}/command/boom?q=1` });
    expect(Buffer.from(calls[0]!.body as Uint8Array).toString()).toBe(body);
  });
});
