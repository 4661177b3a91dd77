/**
 * End-to-end: the real proxy (listener, undici pools, dispatcher, catalogue, crypto)
 * against a fake service whose vehicles verify signatures like real ones.
 */
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig, HELP_REQUESTED, type ProxyConfig } from '../../src/config.js';
import { startProxy, type RunningProxy } from '../../src/cli/serve.js';
import { loadKeyFile } from '../../src/keys/index.js';
import { UniversalMessage } from '../../src/protocol/pb.js';
import { ASLEEP_BODY, FakeFleet, INFO, VSEC, exampleKeyFile, fakeJwt } from './proxy-fake-upstream.js';

const VIN = '5YJ3E1EA7KF000001';
const VIN2 = '5YJ3E1EA7KF000002';
const TOKEN = fakeJwt({ sub: 'user-1', aud: ['https://fleet-api.example.com'] });
const AUTH = { authorization: `Bearer ${TOKEN}` };

let keyFile: { path: string; cleanup(): Promise<void> };
let publicKey: Uint8Array;

beforeAll(async () => {
  keyFile = await exampleKeyFile();
  publicKey = loadKeyFile(keyFile.path).publicKey;
});
afterAll(async () => {
  await keyFile.cleanup();
});

function config(args: string[]): ProxyConfig {
  const c = parseConfig(['--key', keyFile.path, '--port', '0', '--timeout', '15s', ...args], {});
  if (c === HELP_REQUESTED) throw new Error('help');
  return c;
}

const noSleep = async (): Promise<void> => undefined;

function rawRequest(url: string, headers: Record<string, string>): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('proxy against a verifying fake fleet', () => {
  let fleet: FakeFleet;
  let up: { url: string; close(): Promise<void> };
  let proxy: RunningProxy;

  beforeEach(async () => {
    fleet = new FakeFleet([VIN, VIN2], [publicKey]);
    up = await fleet.listen();
    proxy = await startProxy(config(['--upstream', up.url, '--pairing-url', 'https://pair.example', '--developer-domain', 'partner.example']), {
      sleep: noSleep,
      probe: false,
    });
  });
  afterEach(async () => {
    await proxy.close();
    await up.close();
  });

  const cmd = (name: string, body?: unknown, vin = VIN, headers: Record<string, string> = AUTH): Promise<Response> =>
    fetch(`${proxy.url}/api/1/vehicles/${vin}/command/${name}`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });

  it("appends the client's address to a given X-Forwarded-For on signed commands", async () => {
    const res = await cmd('door_lock', undefined, VIN, { ...AUTH, 'x-forwarded-for': '10.0.0.9, 10.0.0.10' });
    expect(res.status).toBe(200);
    const sent = fleet.requests.filter((r) => r.path.endsWith('/signed_command'));
    expect(sent.length).toBeGreaterThanOrEqual(2); // handshake + command
    expect(sent.every((r) => r.headers['x-forwarded-for'] === '10.0.0.9, 10.0.0.10, 127.0.0.1')).toBe(true);
  });

  it('handshakes, then signs a command the vehicle accepts', async () => {
    const res = await cmd('door_lock');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ response: { result: true, reason: '' } });
    expect(fleet.handshakeCount(VIN, VSEC)).toBe(1);
    expect(fleet.executed).toHaveLength(1);
    expect(fleet.executed[0]!.domain).toBe(VSEC);
    // The client's own token went upstream; the body was the service's signed_command shape.
    const sent = fleet.requests.filter((r) => r.path.endsWith('/signed_command'));
    expect(sent.every((r) => r.headers['authorization'] === `Bearer ${TOKEN}`)).toBe(true);
    expect(sent.every((r) => r.headers['x-forwarded-for'] === '127.0.0.1')).toBe(true);
    const last = JSON.parse(sent.at(-1)!.body.toString()) as { routable_message: string };
    const msg = UniversalMessage.RoutableMessage.decode(Buffer.from(last.routable_message, 'base64'));
    expect((msg.flags ?? 0) & 2).toBe(2); // FLAG_ENCRYPT_RESPONSE
    expect(msg.signatureData?.HMAC_PersonalizedData?.counter).toBeGreaterThan(0);
  });

  it('costs one handshake per domain used for N commands', async () => {
    for (let i = 0; i < 4; i++) expect((await cmd('charge_start')).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await cmd('door_unlock')).status).toBe(200);
    expect(fleet.handshakeCount(VIN, INFO)).toBe(1);
    expect(fleet.handshakeCount(VIN, VSEC)).toBe(1);
    expect(fleet.executed).toHaveLength(7);
  });

  it('wake_up and a VCSEC-only command never handshake infotainment', async () => {
    const w = await cmd('wake_up');
    expect(w.status).toBe(200);
    expect(await w.json()).toEqual({ response: { result: true, reason: '' } });
    expect(fleet.countPath(/\/wake_up$/)).toBe(1);
    expect(fleet.countPath(/signed_command/)).toBe(0);
    expect((await cmd('actuate_trunk', { which_trunk: 'rear' })).status).toBe(200);
    expect(fleet.handshakeCount(VIN, INFO)).toBe(0);
    expect(fleet.handshakeCount(VIN, VSEC)).toBe(1);
  });

  it("passes the vehicle's reason through with status 200", async () => {
    fleet.carReason = 'already_set';
    const res = await cmd('set_charge_limit', { percent: 80 });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ response: { result: false, reason: 'already_set' } });
  });

  it('resynchronizes after a vehicle reboot (new epoch) without a new handshake', async () => {
    expect((await cmd('charge_stop')).status).toBe(200);
    expect((await cmd('door_lock')).status).toBe(200);
    fleet.reboot(VIN);
    expect((await cmd('charge_stop')).status).toBe(200);
    expect((await cmd('door_lock')).status).toBe(200);
    expect(fleet.faults.map((f) => f.fault)).toEqual([
      UniversalMessage.MessageFault_E.MESSAGEFAULT_ERROR_INCORRECT_EPOCH,
      UniversalMessage.MessageFault_E.MESSAGEFAULT_ERROR_INCORRECT_EPOCH,
    ]);
    expect(fleet.executed).toHaveLength(4);
    expect(fleet.handshakeCount(VIN, INFO)).toBe(1);
    expect(fleet.handshakeCount(VIN, VSEC)).toBe(1);
  });

  it('serves a burst of 200 concurrent commands to one VIN with no counter reuse', async () => {
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) => cmd(i % 2 ? 'flash_lights' : 'door_lock')));
    expect(results.map((r) => r.status)).toEqual(Array.from({ length: 200 }, () => 200));
    expect(fleet.executed).toHaveLength(200);
    expect(fleet.counterReuse).toBe(0);
    expect(fleet.faults).toEqual([]);
    expect(fleet.handshakeCount(VIN, INFO)).toBe(1);
    expect(fleet.handshakeCount(VIN, VSEC)).toBe(1);
    // Per domain, counters strictly increase in send order (serialized per VIN).
    for (const d of [VSEC, INFO]) {
      const cs = fleet.executed.filter((e) => e.domain === d).map((e) => e.counter);
      expect(cs).toEqual([...cs].sort((a, b) => a - b));
      expect(new Set(cs).size).toBe(cs.length);
    }
  });

  it('answers 408 with the service text for an asleep vehicle', async () => {
    fleet.asleep.add(VIN);
    const res = await cmd('honk_horn');
    expect(res.status).toBe(408);
    expect(await res.text()).toBe(ASLEEP_BODY);
    expect(fleet.executed).toHaveLength(0);
  });

  it('falls back to REST with the original body after a 422, and remembers the VIN', async () => {
    fleet.unsupported.add(VIN2);
    const original = '{ "percent" : 75,   "extra": "kept" }';
    const res = await cmd('set_charge_limit', original, VIN2);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ response: { result: true, rest: true } });
    const rest = fleet.requests.filter((r) => r.path === `/api/1/vehicles/${VIN2}/command/set_charge_limit`);
    expect(rest).toHaveLength(1);
    expect(rest[0]!.body.toString()).toBe(original);
    expect(rest[0]!.headers['authorization']).toBe(`Bearer ${TOKEN}`);
    const signedBefore = fleet.countPath(/signed_command/);
    expect((await cmd('charge_start', undefined, VIN2)).status).toBe(200);
    expect(fleet.countPath(/signed_command/)).toBe(signedBefore); // straight to REST now
    expect(fleet.countPath(new RegExp(`${VIN2}/command/charge_start$`))).toBe(1);
  });

  it('forwards REST-only commands with their original body', async () => {
    const body = '{"sound": 2000}';
    const res = await cmd('remote_boombox', body);
    expect(res.status).toBe(200);
    const rest = fleet.requests.filter((r) => r.path.endsWith('/command/remote_boombox'));
    expect(rest.map((r) => r.body.toString())).toEqual([body]);
    expect(fleet.countPath(/signed_command/)).toBe(0);
  });

  it('names the pairing link when the key is not paired', async () => {
    fleet.enrolled.clear();
    const res = await cmd('door_lock');
    expect(res.status).toBe(403);
    const body = (await res.json()) as { error: string; error_description: string };
    expect(body.error).toBe('key_not_paired');
    expect(body.error_description).toContain('https://pair.example/_ak/partner.example');
  });

  it('never resends after the vehicle may have executed (timeout / lost connection / 5xx)', async () => {
    expect((await cmd('honk_horn')).status).toBe(200); // session established
    const before = fleet.executed.length;
    fleet.inject.push({ kind: 'execute_then', then: 'destroy' });
    const r1 = await cmd('honk_horn');
    expect(r1.status).toBe(503);
    expect(await r1.json()).toMatchObject({ error: 'may_have_executed' });
    fleet.inject.push({ kind: 'execute_then', then: { status: 500, body: '{}' } });
    const r2 = await cmd('honk_horn');
    expect(r2.status).toBe(503);
    const e2 = (await r2.json()) as { error: string; error_description: string };
    expect(e2.error).toBe('may_have_executed');
    expect(e2.error_description).toMatch(/may have executed/);
    expect(fleet.executed.length - before).toBe(2); // each executed once, never resent
  });

  it('answers 504 may_have_executed when the upstream hangs after executing', async () => {
    await proxy.close();
    proxy = await startProxy(config(['--upstream', up.url, '--timeout', '800ms']), { sleep: noSleep, probe: false });
    expect((await cmd('flash_lights')).status).toBe(200);
    fleet.inject.push({ kind: 'execute_then', then: 'hang' });
    const res = await cmd('flash_lights');
    expect(res.status).toBe(504);
    expect(await res.json()).toMatchObject({ error: 'may_have_executed' });
    expect(fleet.executed).toHaveLength(2);
  });

  it('cancels a queued command whose client disconnected before it was sent', async () => {
    await proxy.close();
    proxy = await startProxy(config(['--upstream', up.url, '--timeout', '1500ms']), { sleep: noSleep, probe: false });
    expect((await cmd('door_lock')).status).toBe(200);
    fleet.inject.push({ kind: 'execute_then', then: 'hang' });
    const first = cmd('door_unlock'); // executes, then its answer never comes
    // Wait (bounded) until the first command reached the vehicle, so the next one queues behind it.
    for (let i = 0; i < 200 && fleet.executed.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
    expect(fleet.executed).toHaveLength(2);
    const ac = new AbortController();
    const second = fetch(`${proxy.url}/api/1/vehicles/${VIN}/command/honk_horn`, { method: 'POST', headers: AUTH, signal: ac.signal });
    await new Promise((r) => setTimeout(r, 50));
    ac.abort();
    await expect(second).rejects.toThrow();
    expect((await first).status).toBe(504);
    expect((await cmd('flash_lights')).status).toBe(200); // the queue moves on
    const sentHonk = fleet.executed.filter((e) => e.domain === INFO).length;
    expect(sentHonk).toBe(1); // only flash_lights reached infotainment; honk_horn was never sent
    expect(fleet.handshakeCount(VIN, INFO)).toBe(1);
  });

  it('passes 429 (with Retry-After) and 401/403/412 through unchanged', async () => {
    fleet.inject.push({ kind: 'answer', answer: { status: 429, headers: { 'retry-after': '17', 'ratelimit-reset': '17' }, body: '{"error":"too many"}' } });
    const r429 = await cmd('door_lock');
    expect(r429.status).toBe(429);
    expect(r429.headers.get('retry-after')).toBe('17');
    expect(r429.headers.get('ratelimit-reset')).toBe('17');
    expect(await r429.text()).toBe('{"error":"too many"}');
    for (const status of [401, 403, 412]) {
      const body = `{"response":null,"error":"e${status}","error_description":"d"}`;
      fleet.inject.push({ kind: 'answer', answer: { status, body } });
      const r = await cmd('door_lock');
      expect(r.status).toBe(status);
      expect(await r.text()).toBe(body);
    }
    expect(fleet.executed).toHaveLength(0);
  });

  it('relays pass-through requests faithfully', async () => {
    // node:http, because fetch refuses to send a Connection header.
    const res = await rawRequest(`${proxy.url}/api/1/vehicles/${VIN}/vehicle_data?endpoints=charge_state%3Bclimate_state&x=1`, {
      ...AUTH,
      'x-custom': 'yes',
      'x-forwarded-for': '10.0.0.9',
      connection: 'keep-alive, x-drop-me',
      'x-drop-me': '1',
    });
    expect(res.status).toBe(200);
    expect(res.headers['x-upstream']).toBe('fake');
    expect(res.headers['set-cookie']).toEqual(['a=1', 'b=2']);
    const echo = (JSON.parse(res.body) as { echo: { method: string; path: string; headers: Record<string, string>; body: string } }).echo;
    expect(echo.method).toBe('GET');
    expect(echo.path).toBe(`/api/1/vehicles/${VIN}/vehicle_data?endpoints=charge_state%3Bclimate_state&x=1`);
    expect(echo.headers['authorization']).toBe(`Bearer ${TOKEN}`);
    expect(echo.headers['x-custom']).toBe('yes');
    expect(echo.headers['x-forwarded-for']).toBe('10.0.0.9, 127.0.0.1');
    expect(echo.headers['x-drop-me']).toBeUndefined();

    const body = JSON.stringify({ backup_reserve_percent: 20 });
    fleet.otherwise = (req) => ({ status: 201, headers: { 'x-echo-method': req.method }, body: req.body });
    const post = await fetch(`${proxy.url}/api/1/energy_sites/123/backup`, {
      method: 'POST',
      headers: { ...AUTH, 'content-type': 'application/json' },
      body,
    });
    expect(post.status).toBe(201);
    expect(post.headers.get('x-echo-method')).toBe('POST');
    expect(await post.text()).toBe(body);
    const del = await fetch(`${proxy.url}/api/1/vehicles/${VIN}/drivers?share_user_id=7`, { method: 'DELETE', headers: AUTH });
    expect(del.status).toBe(201);
    expect(fleet.requests.at(-1)).toMatchObject({ method: 'DELETE', path: `/api/1/vehicles/${VIN}/drivers?share_user_id=7` });
  });

  it('serves /health, /status and the command catalogue locally', async () => {
    expect((await fetch(`${proxy.url}/health`)).status).toBe(200);
    expect(await (await fetch(`${proxy.url}/status`)).text()).toBe('ok');
    const doc = (await (await fetch(`${proxy.url}/openapi.json`)).json()) as { openapi?: string };
    expect(doc.openapi).toMatch(/^3\./);
    expect((await fetch(`${proxy.url}/api/1/commands`)).status).toBe(200);
    expect(fleet.requests).toHaveLength(0);
  });
});
