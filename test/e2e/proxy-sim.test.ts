/**
 * End-to-end against the fleet simulator (src/sim): the proxy's signed commands must be
 * accepted by vehicles that verify them as strictly as real ones, with the simulator's
 * own payload decoding (independent of the command catalogue).
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig, type ProxyConfig } from '../../src/config.js';
import { startProxy, type RunningProxy } from '../../src/cli/serve.js';
import { loadKeyFile } from '../../src/keys/index.js';
import { startSim, DEFAULT_FLEET_VINS, type RunningSim } from '../../src/sim/index.js';
import { exampleKeyFile, fakeJwt } from './proxy-fake-upstream.js';

const VIN: string = DEFAULT_FLEET_VINS.modern;
const AUTH = { authorization: `Bearer ${fakeJwt({ sub: 'sim-user' })}`, 'content-type': 'application/json' };
let keyFile: { path: string; cleanup(): Promise<void> };
let publicKey: Uint8Array;

beforeAll(async () => {
  keyFile = await exampleKeyFile();
  publicKey = loadKeyFile(keyFile.path).publicKey;
});
afterAll(async () => {
  await keyFile.cleanup();
});

describe('proxy against the simulator', () => {
  let sim: RunningSim;
  let proxy: RunningProxy;

  beforeEach(async () => {
    sim = await startSim({ port: 0, enroll: [{ publicKey, role: 'owner' }], timeScale: 1000, limits: false });
    const cfg = parseConfig(['--key', keyFile.path, '--port', '0', '--upstream', sim.url, '--timeout', '15s'], {}) as ProxyConfig;
    proxy = await startProxy(cfg, { sleep: async () => undefined });
  });
  afterEach(async () => {
    await proxy.close();
    await sim.close();
  });

  const cmd = (name: string, body?: unknown, vin: string = VIN): Promise<Response> =>
    fetch(`${proxy.url}/api/1/vehicles/${vin}/command/${name}`, {
      method: 'POST',
      headers: AUTH,
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
  const handshakes = (channel: 'vcsec' | 'infotainment', vin: string = VIN): number =>
    sim.sim.log({ vin }).filter((e) => e.event === 'session_info' && e.channel === channel).length;
  const executed = (vin: string = VIN): number => sim.sim.log({ vin }).filter((e) => e.event === 'command' && e.executed).length;

  it('handshakes, then the vehicle accepts the signed command', async () => {
    const r = await cmd('door_lock');
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ response: { result: true, reason: '' } });
    expect(handshakes('vcsec')).toBe(1);
    expect(executed()).toBe(1);
  });

  it('N commands cost one handshake per domain used; wake_up and VCSEC commands never touch infotainment', async () => {
    expect((await cmd('wake_up')).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await cmd(i % 2 ? 'door_unlock' : 'door_lock')).status).toBe(200);
    expect(handshakes('infotainment')).toBe(0);
    expect(handshakes('vcsec')).toBe(1);
    for (let i = 0; i < 3; i++) expect((await cmd('flash_lights')).status).toBe(200);
    const limit = await cmd('set_charge_limit', { percent: 77 });
    expect(limit.status).toBe(200);
    expect(handshakes('infotainment')).toBe(1);
    expect(handshakes('vcsec')).toBe(1);
  });

  it('reports vehicle reasons with status 200', async () => {
    expect((await cmd('set_charge_limit', { percent: 66 })).status).toBe(200);
    const again = await cmd('set_charge_limit', { percent: 66 });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ response: { result: false, reason: 'already_set' } });
  });

  it('resyncs after a vehicle reboot', async () => {
    expect((await cmd('door_lock')).status).toBe(200);
    expect((await cmd('honk_horn')).status).toBe(200);
    sim.sim.reboot(VIN, 'both');
    expect((await cmd('door_unlock')).status).toBe(200);
    expect((await cmd('honk_horn')).status).toBe(200);
    // Adopted the session info that came with the epoch fault: no new handshakes.
    expect(handshakes('vcsec')).toBe(1);
    expect(handshakes('infotainment')).toBe(1);
    expect(sim.sim.log({ vin: VIN }).filter((e) => e.event === 'fault').length).toBe(2);
    expect(executed()).toBe(4);
  });

  it('serves 200 concurrent commands to one VIN, each executed once', async () => {
    const rs = await Promise.all(Array.from({ length: 200 }, () => cmd('flash_lights')));
    expect(rs.map((r) => r.status)).toEqual(Array.from({ length: 200 }, () => 200));
    expect(executed()).toBe(200);
    const counters = sim.sim.log({ vin: VIN }).filter((e) => e.event === 'command').map((e) => e.counter);
    expect(new Set(counters).size).toBe(counters.length);
    expect(handshakes('infotainment')).toBe(1);
  });

  it('answers 408 for an asleep vehicle', async () => {
    const r = await cmd('honk_horn', undefined, DEFAULT_FLEET_VINS.asleep);
    expect(r.status).toBe(408);
    expect(((await r.json()) as { error: string }).error).toMatch(/offline or asleep/);
  });

  it('falls back to REST for a vehicle without signed-command support, body intact', async () => {
    const vin = DEFAULT_FLEET_VINS.legacy;
    const r = await cmd('set_charge_limit', '{"percent": 70}', vin);
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ response: { result: true, reason: '' } });
    const rest = sim.sim.log({ vin }).filter((e) => e.event === 'rest_command');
    expect(rest.map((e) => e.command)).toEqual(['set_charge_limit']);
    const again = await cmd('set_charge_limit', '{"percent": 70}', vin);
    expect(await again.json()).toEqual({ response: { result: false, reason: 'already_set' } });
  });

  it('signs telemetry configs the simulator accepts', async () => {
    const r = await fetch(`${proxy.url}/api/1/vehicles/fleet_telemetry_config`, {
      method: 'POST',
      headers: AUTH,
      body: JSON.stringify({ vins: [VIN], config: { hostname: 't.example.com', port: 443, fields: { BatteryLevel: { interval_seconds: 60 } } } }),
    });
    expect(r.status).toBe(200);
    expect(await r.json()).toMatchObject({ response: { updated_vehicles: 1 } });
  });

  it('exposes readiness and metrics', async () => {
    let ready = 0;
    for (let i = 0; i < 100 && ready !== 200; i++) {
      ready = (await fetch(`${proxy.url}/ready`)).status;
      if (ready !== 200) await new Promise((r) => setTimeout(r, 20));
    }
    expect(ready).toBe(200);
    expect((await cmd('door_lock')).status).toBe(200);
    const text = await (await fetch(`${proxy.url}/metrics`)).text();
    expect(text).toMatch(/vcproxy_handshakes_total\{domain="vehicle_security"\} 1/);
    expect(text).toMatch(/vcproxy_commands_total\{command="door_lock",outcome="ok"\} 1/);
    expect(text).not.toContain(VIN);
  });

  it('passes vehicle_data through', async () => {
    const r = await fetch(`${proxy.url}/api/1/vehicles/${VIN}/vehicle_data?endpoints=charge_state`, { headers: AUTH });
    expect(r.status).toBe(200);
    expect(await r.json()).toMatchObject({ response: { charge_state: {} } });
  });
});
