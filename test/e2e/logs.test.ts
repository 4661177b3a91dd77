/**
 * The access log against the simulator: exactly one structured `request` line per request
 * with every field operators need, and — at debug level — no bearer token, PIN, password or
 * signed payload anywhere in the captured output.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseConfig, type ProxyConfig } from '../../src/config.js';
import { startProxy } from '../../src/cli/serve.js';
import { createLogger } from '../../src/log.js';
import { loadKeyFile } from '../../src/keys/index.js';
import { startSim, DEFAULT_FLEET_VINS } from '../../src/sim/index.js';
import { exampleKeyFile, fakeJwt } from './proxy-fake-upstream.js';
import { logTextWithoutNoise } from '../support/log-noise.js';

const VIN: string = DEFAULT_FLEET_VINS.modern;
let keyFile: { path: string; cleanup(): Promise<void> };
beforeAll(async () => {
  keyFile = await exampleKeyFile();
});
afterAll(async () => {
  await keyFile.cleanup();
});

interface Line {
  level: number;
  msg: string;
  [k: string]: unknown;
}

it('writes one complete request line per request and no secrets at debug level', async () => {
  const sim = await startSim({ port: 0, enroll: [{ publicKey: loadKeyFile(keyFile.path).publicKey, role: 'owner' }], timeScale: 1000, limits: false });
  let text = '';
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      text += chunk.toString();
      cb();
    },
  });
  const cfg = parseConfig(['--key', keyFile.path, '--port', '0', '--upstream', sim.url, '--log-level', 'debug'], {}) as ProxyConfig;
  const proxy = await startProxy(cfg, { logger: createLogger({ level: 'debug', destination: sink }), probe: false, sleep: async () => undefined });
  const token = fakeJwt({ sub: 'log-test-subject-7f3a9c', aud: 'https://x.example.com' });
  const h = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const PIN = '7391';
  const PASSWORD = '5824';
  const post = (name: string, body?: unknown, extra: Record<string, string> = {}): Promise<Response> =>
    fetch(`${proxy.url}/api/1/vehicles/${VIN}/command/${name}`, {
      method: 'POST',
      headers: { ...h, ...extra },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  let sent = 0;
  let r: Response;
  try {
    r = await post('door_lock', undefined, { 'x-request-id': 'req-abc-123' });
    sent++;
    expect(r.status).toBe(200);
    expect(r.headers.get('x-request-id')).toBe('req-abc-123');
    r = await post('speed_limit_activate', { pin: PIN });
    sent++;
    expect(r.status).toBe(200);
    r = await post('set_valet_mode', { on: true, password: PASSWORD });
    sent++;
    expect(r.status).toBe(200);
    r = await post('set_valet_mode', { on: 'maybe', password: PASSWORD }); // invalid: 400
    sent++;
    expect(r.status).toBe(400);
    expect(await r.text()).not.toContain(PASSWORD);
    // A reboot makes the next infotainment command resync.
    await fetch(`${sim.url}/_sim/reboot`, { method: 'POST', body: JSON.stringify({ vin: VIN, domain: 'infotainment' }) });
    r = await post('honk_horn');
    sent++;
    expect(r.status).toBe(200);
    r = await fetch(`${proxy.url}/api/1/vehicles/${VIN}/vehicle_data`, { headers: h });
    sent++;
    expect(r.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/); // generated when none given
    r = await fetch(`${proxy.url}/api/1/vehicles/${VIN}/command/door_lock`, { method: 'POST' }); // no token: 401
    sent++;
    expect(r.status).toBe(401);
  } finally {
    await proxy.close();
    await sim.close();
  }

  const lines = text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Line);
  const requests = lines.filter((l) => l.msg === 'request');
  expect(requests).toHaveLength(sent);

  const lock = requests.find((l) => l['reqId'] === 'req-abc-123');
  expect(lock).toMatchObject({
    method: 'POST',
    route: '/api/1/vehicles/:vin/command/:name',
    vin: VIN,
    command: 'door_lock',
    domain: 'vehicle_security',
    outcome: 'ok',
    status: 200,
    upstreamStatus: 200,
    handshakes: 1,
    resyncs: 0,
  });
  expect(typeof lock!['latencyMs']).toBe('number');

  const honk = requests.find((l) => l['command'] === 'honk_horn');
  expect(honk).toMatchObject({ domain: 'infotainment', outcome: 'ok', resyncs: 1 });
  expect(requests.find((l) => l['status'] === 400)).toMatchObject({ command: 'set_valet_mode', outcome: 'invalid_request' });
  expect(requests.find((l) => l['status'] === 401)).toMatchObject({ outcome: 'unauthorized' });
  const data = requests.find((l) => l['route'] !== '/api/1/vehicles/:vin/command/:name' && l['vin'] === VIN);
  expect(data).toMatchObject({ method: 'GET', upstreamStatus: 200 });
  expect(String(data!['route'])).not.toContain(VIN); // a pattern, not the raw path

  // Nothing secret, at debug level, in any line.
  expect(lines.some((l) => l.level === 20)).toBe(true); // debug lines were captured
  expect(text).not.toContain(token);
  expect(text).not.toContain(token.split('.')[1]!);
  expect(text).not.toContain('log-test-subject-7f3a9c');
  // Request ids are random hex that may contain the 4-digit PIN or password by chance.
  expect(logTextWithoutNoise(text)).not.toContain(PIN);
  expect(logTextWithoutNoise(text)).not.toContain(PASSWORD);
  expect(text).not.toContain('routable_message');
});
