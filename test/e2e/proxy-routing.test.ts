/**
 * End-to-end: upstream choice (token audience + allowlist, 421 re-routing), the guarantee
 * that bad input and non-allowlisted upstreams never cause an outgoing request (counted at
 * a trap server), and the telemetry JWS checked by an independent verifier.
 */
import { createServer, request as httpRequest, type Server } from 'node:http';
import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { p256 } from '@noble/curves/nist.js';
import { parseConfig, HELP_REQUESTED, type ProxyConfig } from '../../src/config.js';
import { startProxy, type RunningProxy } from '../../src/cli/serve.js';
import { loadKeyFile } from '../../src/keys/index.js';
import { FakeFleet, exampleKeyFile, fakeJwt } from './proxy-fake-upstream.js';

const VIN = '5YJ3E1EA7KF000001';
let keyFile: { path: string; cleanup(): Promise<void> };
let publicKey: Uint8Array;
const closers: Array<() => Promise<void>> = [];

beforeAll(async () => {
  keyFile = await exampleKeyFile();
  publicKey = loadKeyFile(keyFile.path).publicKey;
});
afterAll(async () => {
  await keyFile.cleanup();
});
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

function config(args: string[]): ProxyConfig {
  const c = parseConfig(['--key', keyFile.path, '--port', '0', '--timeout', '10s', ...args], {});
  if (c === HELP_REQUESTED) throw new Error('help');
  return c;
}

async function proxyWith(args: string[]): Promise<RunningProxy> {
  const p = await startProxy(config(args), { sleep: async () => undefined, probe: false });
  closers.push(() => p.close());
  return p;
}

/** A server that answers every request with `answer` and counts them. */
async function trap(answer: { status: number; body: string; headers?: Record<string, string> } = { status: 599, body: '' }): Promise<{
  url: string;
  count: () => number;
}> {
  let n = 0;
  const server: Server = createServer((req, res) => {
    n++;
    req.resume();
    req.on('end', () => {
      res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
      res.end(answer.body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(
    () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, count: () => n };
}

async function fleetServer(): Promise<{ fleet: FakeFleet; url: string }> {
  const fleet = new FakeFleet([VIN], [publicKey]);
  const up = await fleet.listen();
  closers.push(() => up.close());
  return { fleet, url: up.url };
}

const post = (url: string, token: string | undefined, body?: string): Promise<Response> =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    ...(body === undefined ? {} : { body }),
  });

describe('upstream choice', () => {
  it('routes by an allowlisted token audience and follows a 421 to an allowlisted host, remembering it per subject', async () => {
    const { fleet, url: b } = await fleetServer();
    const a = await trap({ status: 421, body: JSON.stringify({ response: null, error: `user out of region, use base URL: ${b}, see docs` }) });
    const proxy = await proxyWith(['--allowed-upstreams', '127.0.0.1']);
    const alice = fakeJwt({ sub: 'alice', aud: ['https://auth.example.com/', a.url] });
    const bob = fakeJwt({ sub: 'bob', aud: a.url });

    const r1 = await fetch(`${proxy.url}/api/1/products`, { headers: { authorization: `Bearer ${alice}` } });
    expect(r1.status).toBe(200);
    expect(a.count()).toBe(1);
    expect(fleet.countPath(/^\/api\/1\/products$/)).toBe(1);
    // Remembered: straight to B now, including signed commands.
    expect((await fetch(`${proxy.url}/api/1/products`, { headers: { authorization: `Bearer ${alice}` } })).status).toBe(200);
    expect((await post(`${proxy.url}/api/1/vehicles/${VIN}/command/door_lock`, alice)).status).toBe(200);
    expect(a.count()).toBe(1);
    // Another subject learns it on its own, here during the handshake of a signed command.
    expect((await post(`${proxy.url}/api/1/vehicles/${VIN}/command/charge_start`, bob)).status).toBe(200);
    expect(a.count()).toBe(2);
    expect(fleet.executed).toHaveLength(2);
  });

  it('relays a 421 that names a host outside the allowlist and sends nothing there', async () => {
    const a = await trap({ status: 421, body: '{"error":"use base URL: https://fleet-api.evil.example.org"}' });
    const proxy = await proxyWith(['--allowed-upstreams', '127.0.0.1']);
    // node:http, not fetch: fetch itself retries a 421 once, which would hide what the proxy did.
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(`${proxy.url}/api/1/products`, { headers: { authorization: `Bearer ${fakeJwt({ sub: 's', aud: a.url })}` }, agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(421);
    expect(a.count()).toBe(1);
  });
});

describe('nothing leaves the proxy for bad input or a non-allowlisted upstream', () => {
  it('refuses before forwarding', async () => {
    const t = await trap();
    const fixed = await proxyWith(['--upstream', t.url, '--max-body-bytes', '1024']);
    const tok = fakeJwt({ sub: 's' });
    const base = `${fixed.url}/api/1/vehicles`;
    const cases: Array<[Promise<Response>, number, string, string?]> = [
      [post(`${base}/${VIN}/command/door_lock`, undefined), 401, 'unauthorized'],
      [fetch(`${fixed.url}/api/1/products`), 401, 'unauthorized'],
      [post(`${base}/${VIN}/command/door_lock`, undefined, '{}').then((r) => r), 401, 'unauthorized'],
      [post(`${base}/12345/command/door_lock`, tok), 404, 'not_found'],
      [post(`${base}/5YJ3E1EA7KF00000/command/door_lock`, tok), 404, 'not_found'],
      [post(`${base}/${VIN}/command/self_destruct`, tok), 400, 'invalid_command'],
      [post(`${base}/${VIN}/command/set_charge_limit`, tok, '{"percent": '), 400, 'invalid_request'],
      [post(`${base}/${VIN}/command/set_charge_limit`, tok, '{"percent": "high"}'), 400, 'invalid_request', 'percent'],
      [post(`${base}/${VIN}/command/set_charge_limit`, tok, '{"percent": 500}'), 400, 'invalid_request', 'percent'],
      [post(`${base}/${VIN}/command/actuate_trunk`, tok, '{}'), 400, 'invalid_request', 'which_trunk'],
      [post(`${base}/${VIN}/command/set_temps`, tok, 'x'.repeat(2000)), 413, 'request_too_large'],
      [post(`${base}/fleet_telemetry_config`, tok), 400, 'invalid_request'],
      [post(`${base}/fleet_telemetry_config`, tok, '[1,2]'), 400, 'invalid_request'],
      [post(`${base}/fleet_telemetry_config`, tok, '{"vins": "x", "config": 3}'), 400, 'invalid_request', 'config'],
      [post(`${base}/fleet_telemetry_config`, tok, 'not json'), 400, 'invalid_request'],
    ];
    for (const [p, status, error, field] of cases) {
      const r = await p;
      const body = (await r.json()) as { response: unknown; error: string; messages?: Record<string, string[]> };
      expect({ status: r.status, error: body.error }).toEqual({ status, error });
      expect(body.response).toBeNull();
      if (field) expect(Object.keys(body.messages ?? {})).toContain(field);
    }

    const byAud = await proxyWith(['--allowed-upstreams', 'example.com']);
    const evil = fakeJwt({ sub: 's', aud: t.url }); // 127.0.0.1 is not allowlisted here
    const r1 = await fetch(`${byAud.url}/api/1/products`, { headers: { authorization: `Bearer ${evil}` } });
    expect(r1.status).toBe(403);
    expect(((await r1.json()) as { error: string }).error).toBe('upstream_not_allowed');
    const r2 = await post(`${byAud.url}/api/1/vehicles/${VIN}/command/door_lock`, evil);
    expect(r2.status).toBe(403);
    const r3 = await fetch(`${byAud.url}/api/1/products`, { headers: { authorization: 'Bearer opaque-token' } });
    expect(r3.status).toBe(401);
    expect(t.count()).toBe(0);
  });
});

/** Independent Tesla.SS256 verifier: V == r·G + c·P, c = SHA-256 over length-prefixed G, V, P, message. */
function verifySs256(token: string): { header: Record<string, unknown>; claims: Record<string, unknown> } {
  const [h, p, s] = token.split('.') as [string, string, string];
  const header = JSON.parse(Buffer.from(h, 'base64url').toString()) as Record<string, unknown>;
  const claims = JSON.parse(Buffer.from(p, 'base64url').toString()) as Record<string, unknown>;
  const sig = Buffer.from(s, 'base64url');
  if (sig.length !== 96) throw new Error('signature must be 96 bytes');
  const pub = Buffer.from(claims['iss'] as string, 'base64');
  const lv = (b: Uint8Array): Buffer => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(b.length);
    return Buffer.concat([len, b]);
  };
  const G = p256.Point.BASE.toBytes(false);
  const V = Buffer.concat([Buffer.from([4]), sig.subarray(0, 64)]);
  const c = createHash('sha256').update(Buffer.concat([lv(G), lv(V), lv(pub), lv(Buffer.from(`${h}.${p}`))])).digest();
  const n = p256.Point.Fn.ORDER;
  const cs = BigInt('0x' + c.toString('hex')) % n;
  const r = BigInt('0x' + sig.subarray(64).toString('hex')) % n;
  const lhs = p256.Point.BASE.multiply(r).add(p256.Point.fromBytes(pub).multiply(cs));
  if (!Buffer.from(lhs.toBytes(false)).equals(V)) throw new Error('signature does not verify');
  return { header, claims };
}

describe('fleet_telemetry_config', () => {
  it('signs the config as a Tesla.SS256 JWS and forwards {vins, token} to the _jws endpoint', async () => {
    const { fleet, url } = await fleetServer();
    const proxy = await proxyWith(['--upstream', url]);
    const config = { hostname: 'telemetry.example.com', port: 4443, ca: '-----BEGIN CERTIFICATE-----\nX\n', fields: { BatteryLevel: { interval_seconds: 60 } }, exp: 1_900_000_000 };
    const r = await post(`${proxy.url}/api/1/vehicles/fleet_telemetry_config`, fakeJwt({ sub: 's' }), JSON.stringify({ vins: [VIN], config }));
    expect(r.status).toBe(200);
    const sent = fleet.requests.filter((q) => q.path === '/api/1/vehicles/fleet_telemetry_config_jws');
    expect(sent).toHaveLength(1);
    const body = JSON.parse(sent[0]!.body.toString()) as { vins: string[]; token: string };
    expect(body.vins).toEqual([VIN]);
    const { header, claims } = verifySs256(body.token);
    expect(header['alg']).toBe('Tesla.SS256');
    expect(claims['aud']).toBe('com.tesla.fleet.TelemetryClient');
    expect(claims['iss']).toBe(Buffer.from(publicKey).toString('base64'));
    expect(claims).toMatchObject(config);
    // A tampered token must fail the same verifier (the check can fail).
    const [h, p, s] = body.token.split('.') as [string, string, string];
    const tampered = JSON.parse(Buffer.from(p, 'base64url').toString()) as Record<string, unknown>;
    tampered['port'] = 1;
    expect(() => verifySs256(`${h}.${Buffer.from(JSON.stringify(tampered)).toString('base64url')}.${s}`)).toThrow();
  });
});
