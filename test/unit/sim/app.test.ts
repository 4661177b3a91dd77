/**
 * The simulated service's HTTP behaviour in process (app.request): envelope and status
 * codes (401/404/406/408/422/403/429), paging, hide_private, fleet_status, telemetry JWS,
 * fault injection and the activity log.
 */
import { describe, expect, test } from 'vitest';
import { signTelemetryConfig } from '../../../src/keys/index.js';
import { createSimApp, DEFAULT_FLEET_VINS, parseFleet, Sim } from '../../../src/sim/index.js';
import { AUTH, handshake, lockPayload, makeSim, newKey, sendRoutable, sign, vehicleData, VCSEC_DOMAIN } from './helpers.js';

const V = DEFAULT_FLEET_VINS;
const post = (app: ReturnType<typeof createSimApp>, path: string, body: unknown = {}, headers: Record<string, string> = AUTH) =>
  app.request(path, { method: 'POST', headers, body: JSON.stringify(body) });

describe('envelope and status codes', () => {
  test('GET /status needs no token and answers ok', async () => {
    const { app } = makeSim();
    const res = await app.request('/status');
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('ok');
  });
  test('401 without a bearer token, 406 for POST without JSON content type', async () => {
    const { app } = makeSim();
    const r1 = await app.request('/api/1/vehicles');
    expect(r1.status).toBe(401);
    expect(await r1.json()).toMatchObject({ response: null, error: 'unauthorized' });
    const r2 = await app.request('/api/1/vehicles', { headers: { authorization: 'Bearer ' } });
    expect(r2.status).toBe(401);
    const r3 = await app.request(`/api/1/vehicles/${V.modern}/wake_up`, { method: 'POST', headers: { authorization: 'Bearer t' } });
    expect(r3.status).toBe(406);
    expect(await r3.json()).toMatchObject({ error: 'not_a_JSON_request' });
    const r4 = await app.request(`/api/1/vehicles/${V.modern}/wake_up`, { method: 'POST', headers: { authorization: 'Bearer t', 'content-type': 'text/plain' }, body: '{}' });
    expect(r4.status).toBe(406);
  });
  test('404 for an unknown vehicle; id or VIN both resolve', async () => {
    const { app, sim } = makeSim();
    expect((await app.request('/api/1/vehicles/5YJ3E1EA8MF999999', { headers: AUTH })).status).toBe(404);
    const id = sim.vehicle(V.modern).id;
    const byId = (await (await app.request(`/api/1/vehicles/${id}`, { headers: AUTH })).json()) as any;
    expect(byId.response.vin).toBe(V.modern);
  });
  test('408 while asleep or offline (vehicle_data and signed_command)', async () => {
    const { app, sim, owner } = makeSim();
    expect((await vehicleData(app, V.asleep)).status).toBe(408);
    const s = await handshake(app, owner, V.modern, VCSEC_DOMAIN);
    sim.setState(V.modern, 'offline');
    const r = await sendRoutable(app, V.modern, sign(s, lockPayload()).bytes);
    expect(r.status).toBe(408);
    expect(sim.vehicle(V.modern).state.locked).toBe(false);
  });
  test('422 on signed_command for the pre-2021 S; its REST commands execute', async () => {
    const { app, sim } = makeSim();
    const r = await post(app, `/api/1/vehicles/${V.legacy}/signed_command`, { routable_message: 'AA==' });
    expect(r.status).toBe(422);
    expect(await r.json()).toMatchObject({ response: null, error: 'invalid_resource' });
    sim.vehicle(V.legacy).state.locked = false;
    const lock = await post(app, `/api/1/vehicles/${V.legacy}/command/door_lock`);
    expect(lock.status).toBe(200);
    expect(await lock.json()).toEqual({ response: { result: true, reason: '' } });
    expect(sim.vehicle(V.legacy).state.locked).toBe(true);
    const limit = await post(app, `/api/1/vehicles/${V.legacy}/command/set_charge_limit`, { percent: 80 });
    expect(await limit.json()).toEqual({ response: { result: false, reason: 'already_set' } });
    expect((await post(app, `/api/1/vehicles/${V.legacy}/command/fly_away`)).status).toBe(400);
  });
  test('REST commands for a car that requires signing: 403, nothing executed', async () => {
    const { app, sim } = makeSim();
    const r = await post(app, `/api/1/vehicles/${V.modern}/command/door_lock`);
    expect(r.status).toBe(403);
    expect(await r.json()).toMatchObject({ error: 'vehicle_command_protocol_required' });
    expect(sim.vehicle(V.modern).state.locked).toBe(false);
  });
  test('401 mobile_access_disabled when the owner turned mobile access off', async () => {
    const sim = new Sim({ fleet: { vehicles: [{ vin: '5YJ3E1EA8MF000321', mobile_access_disabled: true }] }, limits: false });
    const app = createSimApp(sim);
    const r = await post(app, '/api/1/vehicles/5YJ3E1EA8MF000321/signed_command', { routable_message: '' });
    expect(r.status).toBe(401);
    expect(await r.json()).toMatchObject({ error: 'mobile_access_disabled' });
  });
  test('signed_command with a body that is not a RoutableMessage → 400', async () => {
    const { app } = makeSim();
    expect((await post(app, `/api/1/vehicles/${V.modern}/signed_command`, {})).status).toBe(400);
    expect((await post(app, `/api/1/vehicles/${V.modern}/signed_command`, { routable_message: '!!' })).status).toBe(400);
  });
});

describe('lists and records', () => {
  test('vehicle list is paged (100 per page by default)', async () => {
    const vehicles = Array.from({ length: 130 }, (_, i) => ({ vin: `5YJ3E1EA8MF${String(100000 + i)}` }));
    const sim = new Sim({ fleet: { vehicles }, limits: false });
    const app = createSimApp(sim);
    const p1 = (await (await app.request('/api/1/vehicles', { headers: AUTH })).json()) as any;
    expect(p1.response).toHaveLength(100);
    expect(p1.pagination).toMatchObject({ current: 1, next: 2, count: 130 });
    const p2 = (await (await app.request('/api/1/vehicles?page=2', { headers: AUTH })).json()) as any;
    expect(p2.response).toHaveLength(30);
    expect(p2.pagination.next).toBeNull();
  });
  test('products and fleet_status', async () => {
    const { app } = makeSim();
    const prod = (await (await app.request('/api/1/products', { headers: AUTH })).json()) as any;
    expect(prod.count).toBe(6);
    const fs = (await (await post(app, '/api/1/vehicles/fleet_status', { vins: [V.modern, V.legacy] })).json()) as any;
    expect(fs.response.vehicle_info[V.modern]).toMatchObject({ vehicle_command_protocol_required: true, firmware_version: '2024.44.25', total_number_of_keys: 1 });
    expect(fs.response.vehicle_info[V.legacy].vehicle_command_protocol_required).toBe(false);
    expect(fs.response.key_paired_vins).toContain(V.modern);
  });
  test('hide_private: location omitted from vehicle_data even when location_data is asked for', async () => {
    const { app } = makeSim();
    const shared = await vehicleData(app, V.shared, '?endpoints=location_data;vehicle_state');
    expect(shared.status).toBe(200);
    expect(shared.body.response.granular_access.hide_private).toBe(true);
    expect(shared.body.response.drive_state).not.toHaveProperty('latitude');
    expect(shared.body.response.drive_state).not.toHaveProperty('longitude');
    const modern = await vehicleData(app, V.modern, '?endpoints=location_data');
    expect(modern.body.response.drive_state.latitude).toBeTypeOf('number');
    expect(modern.body.response).not.toHaveProperty('charge_state');
  });
});

describe('limits', () => {
  test('the 51st command of the day → 429 with Retry-After; limits:false switches it off', async () => {
    const { app } = makeSim({ limits: true });
    let last: Response | undefined;
    for (let i = 0; i < 51; i++) last = await post(app, `/api/1/vehicles/${V.legacy}/command/honk_horn`);
    expect(last!.status).toBe(429);
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another vehicle has its own budget.
    expect((await post(app, `/api/1/vehicles/${V.modern}/signed_command`, { routable_message: '' })).status).not.toBe(429);
    const off = makeSim({ limits: false });
    let status = 0;
    for (let i = 0; i < 60; i++) status = (await post(off.app, `/api/1/vehicles/${V.legacy}/command/honk_horn`)).status;
    expect(status).toBe(200);
  });
  test('wake-up: 15 a day; device data: 200 a day', async () => {
    const { app } = makeSim({ limits: true });
    const statuses: number[] = [];
    for (let i = 0; i < 16; i++) statuses.push((await post(app, `/api/1/vehicles/${V.modern}/wake_up`)).status);
    expect(statuses.slice(0, 15).every((s) => s === 200)).toBe(true);
    expect(statuses[15]).toBe(429);
    let st = 0;
    for (let i = 0; i < 201; i++) st = (await vehicleData(app, V.modern)).status;
    expect(st).toBe(429);
  });
  test('the day rolls over at UTC midnight', async () => {
    let now = Date.UTC(2026, 0, 1, 23, 59, 0);
    const { app } = makeSim({ limits: true, now: () => now });
    for (let i = 0; i < 15; i++) await post(app, `/api/1/vehicles/${V.modern}/wake_up`);
    const r = await post(app, `/api/1/vehicles/${V.modern}/wake_up`);
    expect(r.status).toBe(429);
    expect(r.headers.get('retry-after')).toBe('60');
    now += 61_000;
    expect((await post(app, `/api/1/vehicles/${V.modern}/wake_up`)).status).toBe(200);
  });
});

describe('fault injection and log', () => {
  test('fail_next: the next request fails with the status and is not executed', async () => {
    const { app, sim, owner } = makeSim();
    const s = await handshake(app, owner, V.modern, VCSEC_DOMAIN);
    expect((await post(app, '/_sim/fail_next', { vin: V.modern, status: 503 })).status).toBe(200);
    const r = await sendRoutable(app, V.modern, sign(s, lockPayload()).bytes);
    expect(r.status).toBe(503);
    expect(sim.vehicle(V.modern).state.locked).toBe(false);
    const ok = await sendRoutable(app, V.modern, sign(s, lockPayload()).bytes);
    expect(ok.status).toBe(200);
    expect(sim.vehicle(V.modern).state.locked).toBe(true);
  });
  test('drop_next: executed but the answer is lost (408); the log shows it executed once', async () => {
    const { app, sim, owner } = makeSim();
    const s = await handshake(app, owner, V.modern, VCSEC_DOMAIN);
    await post(app, '/_sim/drop_next', { vin: V.modern, hold_ms: 1 });
    const cmd = sign(s, lockPayload());
    const r = await sendRoutable(app, V.modern, cmd.bytes);
    expect(r.status).toBe(408);
    expect(sim.vehicle(V.modern).state.locked).toBe(true);
    const log = (await (await app.request(`/_sim/log?vin=${V.modern}`)).json()) as any;
    const executed = log.response.filter((e: any) => e.executed);
    expect(executed).toHaveLength(1);
    expect(executed[0]).toMatchObject({ command: 'door_lock', counter: cmd.counter, channel: 'vcsec', role: 'owner' });
  });
  test('delay_next answers late but answers', async () => {
    const { app, owner } = makeSim();
    const s = await handshake(app, owner, V.modern, VCSEC_DOMAIN);
    await post(app, '/_sim/delay_next', { ms: 5 });
    expect((await sendRoutable(app, V.modern, sign(s, lockPayload()).bytes)).status).toBe(200);
  });
  test('reboot changes the epoch; sleep/online; skew_clock; reset; enroll', async () => {
    const { app, sim } = makeSim();
    const before = sim.vehicle(V.modern).infotainment.epoch;
    await post(app, '/_sim/reboot', { vin: V.modern, domain: 'infotainment' });
    expect(sim.vehicle(V.modern).infotainment.epoch).not.toEqual(before);
    await post(app, '/_sim/sleep', { vin: V.modern });
    expect((await vehicleData(app, V.modern)).status).toBe(408);
    await post(app, '/_sim/online', { vin: V.modern });
    expect((await vehicleData(app, V.modern)).status).toBe(200);
    await post(app, '/_sim/skew_clock', { vin: V.modern, domain: 'vcsec', seconds: 500 });
    expect(sim.vehicle(V.modern).vcsec.clock()).toBeGreaterThanOrEqual(500);
    expect((await post(app, '/_sim/skew_clock', { vin: V.modern, domain: 'nope', seconds: 1 })).status).toBe(400);
    expect((await post(app, '/_sim/reboot', {})).status).toBe(400);
    sim.vehicle(V.modern).state.locked = true;
    await post(app, '/_sim/reset', {});
    expect(sim.vehicle(V.modern).state.locked).toBe(false);
    expect(sim.vehicle(V.modern).keys.size).toBe(1);
    const k = newKey();
    const pem = (await import('../../../src/keys/index.js')).publicKeyToPem(k.publicKey);
    expect((await post(app, '/_sim/enroll', { public_key: pem, role: 'driver', vins: [V.modern] })).status).toBe(200);
    expect(sim.vehicle(V.modern).keys.size).toBe(2);
    expect(sim.vehicle(V.modern2).keys.size).toBe(1);
  });
});

describe('guest access (spec: Guest access table)', () => {
  test('scan → granted; new QR → replaced; key card drive, guest mode off, drivers remove → removed', async () => {
    // A REST-commanded car on guest-capable firmware (2024.14+), so guest_mode runs unsigned.
    const vin = '5YJSA1E26HF000777';
    const sim = new Sim({ fleet: { vehicles: [{ vin, model: 'S', year: 2017, firmware: '2024.20.1' }] }, limits: false });
    const app = createSimApp(sim);
    const guest = async () => ((await (await app.request(`/api/1/vehicles/${vin}/drivers`, { headers: AUTH })).json()) as any).response;
    expect((await post(app, '/_sim/guest', { vin, event: 'scan_qr' })).status).toBe(409);
    sim.vehicle(vin).state.guestMode = true;
    await post(app, '/_sim/guest', { vin, event: 'scan_qr', guest_id: 'g1' });
    expect(await guest()).toEqual([{ id: 'g1', role: 'guest' }]);
    await post(app, '/_sim/guest', { vin, event: 'scan_qr', guest_id: 'g2' });
    expect(await guest()).toEqual([{ id: 'g2', role: 'guest' }]);
    await post(app, '/_sim/guest', { vin, event: 'key_card_drive' });
    expect(await guest()).toEqual([]);
    await post(app, '/_sim/guest', { vin, event: 'scan_qr', guest_id: 'g3' });
    await post(app, `/api/1/vehicles/${vin}/command/guest_mode`, { enable: false });
    expect(await guest()).toEqual([]);
    sim.vehicle(vin).state.guestMode = true;
    await post(app, '/_sim/guest', { vin, event: 'scan_qr', guest_id: 'g4' });
    expect((await app.request(`/api/1/vehicles/${vin}/drivers`, { method: 'DELETE', headers: AUTH })).status).toBe(200);
    expect(await guest()).toEqual([]);
  });
});

describe('telemetry JWS and fleet files', () => {
  test('fleet_telemetry_config_jws verifies the token and skips vehicles by reason', async () => {
    const { app, owner } = makeSim();
    const token = signTelemetryConfig(owner, { hostname: 'telemetry.example.com', fields: { BatteryLevel: { interval_seconds: 60 } } });
    const r = await post(app, '/api/1/vehicles/fleet_telemetry_config_jws', { vins: [V.modern, V.legacy, V.oldFirmware, V.asleep], token });
    const body = (await r.json()) as any;
    expect(r.status).toBe(200);
    expect(body.response.updated_vehicles).toBe(1);
    expect(body.response.skipped_vehicles).toMatchObject({ unsupported_hardware: [V.legacy], unsupported_firmware: [V.oldFirmware, V.asleep] });
    const stranger = signTelemetryConfig(newKey(), { fields: {} });
    const r2 = (await (await post(app, '/api/1/vehicles/fleet_telemetry_config_jws', { vins: [V.modern], token: stranger })).json()) as any;
    expect(r2.response.skipped_vehicles.missing_key).toEqual([V.modern]);
    const bad = await post(app, '/api/1/vehicles/fleet_telemetry_config_jws', { vins: [V.modern], token: token.slice(0, -4) + 'AAAA' });
    expect(bad.status).toBe(400);
    const loc = signTelemetryConfig(owner, { fields: { Location: { interval_seconds: 10 } } });
    expect((await post(app, '/api/1/vehicles/fleet_telemetry_config_jws', { vins: [V.shared], token: loc })).status).toBe(403);
  });
  test('parseFleet accepts YAML and JSON, rejects unknown keys and bad VINs', () => {
    const y = parseFleet('vehicles:\n  - vin: 5YJ3E1EA8MF000777\n    model: "3"\n    state: asleep\n');
    expect(y.vehicles[0]).toMatchObject({ vin: '5YJ3E1EA8MF000777', state: 'asleep' });
    expect(parseFleet(JSON.stringify({ vehicles: [{ vin: '5YJ3E1EA8MF000778' }] })).vehicles).toHaveLength(1);
    expect(() => parseFleet('vehicles:\n  - vin: 5YJ3E1EA8MF000777\n    colour: red\n')).toThrow(/not a valid fleet/);
    expect(() => parseFleet('vehicles:\n  - vin: SHORT\n')).toThrow(/17 characters/);
    expect(() => parseFleet('vehicles: [{vin: 5YJ3E1EA8MF000777}, {vin: 5YJ3E1EA8MF000777}]')).toThrow(/twice/);
  });
});
