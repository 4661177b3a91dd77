/**
 * Secrets never reach the log, at trace level, across success and failure paths.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseConfig, type ProxyConfig } from '../../src/config.js';
import { startProxy } from '../../src/cli/serve.js';
import { createLogger } from '../../src/log.js';
import { loadKeyFile } from '../../src/keys/index.js';
import { FakeFleet, exampleKeyFile, fakeJwt } from './proxy-fake-upstream.js';
import { logTextWithoutNoise } from '../support/log-noise.js';

const VIN = '5YJ3E1EA7KF000001';
let keyFile: { path: string; cleanup(): Promise<void> };
beforeAll(async () => {
  keyFile = await exampleKeyFile();
});
afterAll(async () => {
  await keyFile.cleanup();
});

it('logs neither bearer tokens, PINs nor signed payloads', async () => {
  const fleet = new FakeFleet([VIN], [loadKeyFile(keyFile.path).publicKey]);
  const up = await fleet.listen();
  let logText = '';
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      logText += chunk.toString();
      cb();
    },
  });
  const cfg = parseConfig(['--key', keyFile.path, '--port', '0', '--upstream', up.url, '--log-level', 'trace'], {}) as ProxyConfig;
  const proxy = await startProxy(cfg, { logger: createLogger({ level: 'trace', destination: sink }), probe: false, sleep: async () => undefined });
  const token = fakeJwt({ sub: 'secret-subject-token-test', aud: 'https://x.example.com' });
  const h = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  try {
    await fetch(`${proxy.url}/api/1/vehicles/${VIN}/command/door_lock`, { method: 'POST', headers: h });
    fleet.reboot(VIN);
    await fetch(`${proxy.url}/api/1/vehicles/${VIN}/command/door_lock`, { method: 'POST', headers: h });
    await fetch(`${proxy.url}/api/1/vehicles/${VIN}/command/speed_limit_activate`, { method: 'POST', headers: h, body: '{"pin":"4321"}' });
    fleet.inject.push({ kind: 'execute_then', then: { status: 500, body: 'upstream exploded' } });
    await fetch(`${proxy.url}/api/1/vehicles/${VIN}/command/door_unlock`, { method: 'POST', headers: h });
    fleet.enrolled.clear();
    await fetch(`${proxy.url}/api/1/vehicles/${VIN}/command/honk_horn`, { method: 'POST', headers: h });
    await fetch(`${proxy.url}/api/1/products`, { headers: h });
  } finally {
    await proxy.close();
    await up.close();
  }
  expect(logText).toContain('resynchronized session'); // the log did capture the run
  expect(logText).not.toContain(token);
  expect(logText).not.toContain(token.split('.')[1]!);
  expect(logTextWithoutNoise(logText)).not.toContain('4321'); // request ids are random hex
  for (const r of fleet.requests.filter((q) => q.path.endsWith('/signed_command'))) {
    const b64 = (JSON.parse(r.body.toString()) as { routable_message: string }).routable_message;
    expect(logText).not.toContain(b64.slice(0, 40));
  }
});
