/**
 * The simulator's REST `command/{name}` routing for vehicles that require the signed
 * protocol (service-side commands execute, the rest are 403, unknown names 400), the
 * log's decoded parameters and keyed body digests, and the spec's daily limit of 5
 * charging commands per vehicle (signed and REST, switchable off with the other limits).
 */
import { describe, expect, test } from 'vitest';
import { createSimApp, DEFAULT_FLEET_VINS, DISCOVERY_LIMITS } from '../../../src/sim/index.js';
import { CHARGING_LIMITED_COMMANDS, REST_COMMANDS, SERVICE_REST_COMMANDS } from '../../../src/sim/state.js';
import { AUTH, action, handshake, INFO_DOMAIN, makeSim, runAction, sendRoutable, sign, VCSEC_DOMAIN } from './helpers.js';

const V = DEFAULT_FLEET_VINS;
const postRaw = (app: ReturnType<typeof createSimApp>, path: string, body: string) =>
  app.request(path, { method: 'POST', headers: AUTH, body });

describe('REST command/{name} on a vehicle that requires signing', () => {
  test('service-side commands (no vehicle message exists) execute; the body is logged by digest and params', async () => {
    const { app, sim } = makeSim();
    const raw = '{ "lat": 37.4925 , "lon": -121.9447, "order": 1 }';
    const r = await postRaw(app, `/api/1/vehicles/${V.modern}/command/navigation_gps_request`, raw);
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ response: { result: true, reason: '' } });
    const e = sim.log({ vin: V.modern }).find((x) => x.event === 'rest_command');
    expect(e).toMatchObject({ command: 'navigation_gps_request', executed: true, params: { lat: 37.4925, lon: -121.9447, order: 1 } });
    expect(e?.body_digest).toBe(sim.bodyDigest(raw));
    // Keyed: not the plain SHA-256 of the body, and a different simulator has another key.
    expect(e?.body_digest).not.toBe(makeSim().sim.bodyDigest(raw));
    expect(sim.bodyDigest(raw)).not.toBe(sim.bodyDigest(raw.replace(' ,', ',')));
  });

  test('every service-side command is a known REST command, and each one executes on a signing car', async () => {
    const { app } = makeSim();
    for (const name of SERVICE_REST_COMMANDS) {
      expect(REST_COMMANDS.has(name), name).toBe(true);
      const r = await postRaw(app, `/api/1/vehicles/${V.modern}/command/${name}`, '{}');
      expect(r.status, name).toBe(200);
    }
  });

  test('commands with a signed message still answer 403; unknown names stay 400 invalid_command', async () => {
    const { app, sim } = makeSim();
    for (const name of ['door_lock', 'set_charge_limit', 'open_tonneau', 'set_low_power_mode']) {
      const r = await postRaw(app, `/api/1/vehicles/${V.modern}/command/${name}`, '{}');
      expect(r.status, name).toBe(403);
      expect(await r.json()).toMatchObject({ error: 'vehicle_command_protocol_required' });
    }
    for (const name of ['fly_away', '__proto__', 'constructor', 'wake_up']) {
      const r = await postRaw(app, `/api/1/vehicles/${V.modern}/command/${name}`, '{}');
      expect(r.status, name).toBe(400);
      expect(await r.json()).toMatchObject({ error: 'invalid_command' });
    }
    expect(sim.log({ vin: V.modern }).filter((e) => e.event === 'rest_command')).toHaveLength(0);
  });

  test('the legacy car runs the power-mode and tonneau commands over REST', async () => {
    const { app, sim } = makeSim();
    const r = await postRaw(app, `/api/1/vehicles/${V.legacy}/command/set_low_power_mode`, '{"enable": true}');
    expect(await r.json()).toEqual({ response: { result: true, reason: '' } });
    expect(sim.vehicle(V.legacy).state.lowPowerMode).toBe(true);
    // A Model S has no tonneau: refused by the vehicle, not rejected as an unknown command.
    const t = await postRaw(app, `/api/1/vehicles/${V.legacy}/command/open_tonneau`, '{}');
    expect(await t.json()).toEqual({ response: { result: false, reason: 'not_supported' } });
  });
});

describe('log of signed commands', () => {
  test('decoded parameters are logged; PINs and passwords are redacted', async () => {
    const { app, sim, owner } = makeSim();
    const s = await handshake(app, owner, V.modern, INFO_DOMAIN);
    expect(await runAction(app, s, V.modern, { chargingSetLimitAction: { percent: 77 } })).toMatchObject({ result: true });
    expect(await runAction(app, s, V.modern, { drivingSpeedLimitAction: { activate: true, pin: '9876' } })).toMatchObject({ result: true });
    const cmds = sim.log({ vin: V.modern }).filter((e) => e.event === 'command');
    expect(cmds.map((e) => [e.command, e.params])).toEqual([
      ['set_charge_limit', { percent: 77 }],
      ['speed_limit_activate', { pin: '[redacted]' }],
    ]);
    expect(JSON.stringify(sim.log())).not.toContain('9876');
    expect(sim.vehicle(V.modern).state.speedLimit.pin).toBe('9876');
  });

  test('schedules decode with their proto3 defaults (false/0 are not on the wire)', async () => {
    const { app, sim, owner } = makeSim();
    const s = await handshake(app, owner, V.modern, INFO_DOMAIN);
    const r = await runAction(app, s, V.modern, {
      addChargeScheduleAction: { id: 7, daysOfWeek: 0b0100010, startEnabled: true, startTime: 60, enabled: true, latitude: 1.5, longitude: -2.5 },
    });
    expect(r).toMatchObject({ result: true });
    const e = sim.log({ vin: V.modern }).find((x) => x.event === 'command');
    expect(e?.params).toEqual({
      id: 7,
      name: '',
      days_of_week: 'MON,FRI',
      enabled: true,
      start_enabled: true,
      start_time: 60,
      end_enabled: false,
      end_time: 0,
      one_time: false,
      lat: 1.5,
      lon: -2.5,
    });
    expect(sim.vehicle(V.modern).state.chargeSchedules.get(7)).toMatchObject({ id: 7, end_enabled: false });
  });
});

describe('seat heaters', () => {
  test('every seat the protocol names (service positions 0..8) can be heated', async () => {
    const { app, sim, owner } = makeSim();
    sim.vehicle(V.modern).state.climateOn = true;
    const s = await handshake(app, owner, V.modern, INFO_DOMAIN);
    const seats = ['CAR_SEAT_FRONT_LEFT', 'CAR_SEAT_FRONT_RIGHT', 'CAR_SEAT_REAR_LEFT', 'CAR_SEAT_REAR_LEFT_BACK', 'CAR_SEAT_REAR_CENTER', 'CAR_SEAT_REAR_RIGHT', 'CAR_SEAT_REAR_RIGHT_BACK', 'CAR_SEAT_THIRD_ROW_LEFT', 'CAR_SEAT_THIRD_ROW_RIGHT'];
    for (const seat of seats) {
      const r = await runAction(app, s, V.modern, { hvacSeatHeaterActions: { hvacSeatHeaterAction: [{ SEAT_HEATER_MED: {}, [seat]: {} }] } });
      expect(r, seat).toMatchObject({ result: true });
    }
    const heaters = sim.vehicle(V.modern).state.seatHeaters;
    expect(Object.values(heaters)).toEqual(Array.from({ length: 9 }, () => 2));
  });
});

describe('daily charging-command limit (spec Limits: 5 per vehicle per day)', () => {
  test('the limit is 5 and covers the charging commands only', () => {
    expect(DISCOVERY_LIMITS.charging).toBe(5);
    for (const n of ['charge_start', 'charge_stop', 'set_charge_limit', 'set_charging_amps', 'charge_port_door_open', 'charge_port_door_close', 'charge_standard', 'charge_max_range', 'set_scheduled_charging', 'add_charge_schedule', 'remove_charge_schedule', 'set_managed_charge_current_request']) {
      expect(CHARGING_LIMITED_COMMANDS.has(n), n).toBe(true);
    }
    for (const n of ['door_lock', 'auto_conditioning_start', 'add_precondition_schedule', 'honk_horn', 'vehicle_data']) {
      expect(CHARGING_LIMITED_COMMANDS.has(n), n).toBe(false);
    }
  });

  test('signed: the 6th charging command of the day → 429, not executed; other commands still run', async () => {
    const { app, sim, owner } = makeSim({ limits: true });
    const s = await handshake(app, owner, V.modern, INFO_DOMAIN);
    for (let i = 0; i < 5; i++) {
      expect(await runAction(app, s, V.modern, { setChargingAmpsAction: { chargingAmps: 6 + i } })).toMatchObject({ result: true });
    }
    const sixth = await sendRoutable(app, V.modern, sign(s, action({ setChargingAmpsAction: { chargingAmps: 20 } })).bytes);
    expect(sixth.status).toBe(429);
    expect(sixth.body).toMatchObject({ response: null, error: 'rate_limited' });
    expect(sim.vehicle(V.modern).state.chargeAmps).toBe(10);
    const refused = sim.log({ vin: V.modern }).filter((e) => e.reason === 'rate_limited');
    expect(refused).toMatchObject([{ command: 'set_charging_amps', executed: false, verified: true }]);
    // Not a charging command: still within the 50 commands.
    expect(await runAction(app, s, V.modern, { vehicleControlFlashLightsAction: {} })).toMatchObject({ result: true });
    // commands: the handshake, 5 accepted, the refused one, flash_lights (all signed_command requests).
    expect(sim.describe(V.modern).limits).toMatchObject({ charging: 5, commands: 8 });
    // Another vehicle has its own budget.
    const s2 = await handshake(app, owner, V.modern2, INFO_DOMAIN);
    expect(await runAction(app, s2, V.modern2, { setChargingAmpsAction: { chargingAmps: 8 } })).toMatchObject({ result: true });
  });

  test('the 429 carries Retry-After (seconds to the next UTC day)', async () => {
    const now = Date.UTC(2026, 0, 1, 23, 0, 0);
    const { app } = makeSim({ limits: true, now: () => now });
    for (let i = 0; i < 5; i++) expect((await postRaw(app, `/api/1/vehicles/${V.legacy}/command/set_charging_amps`, `{"charging_amps": ${10 + i}}`)).status).toBe(200);
    const r = await postRaw(app, `/api/1/vehicles/${V.legacy}/command/charge_port_door_open`, '{}');
    expect(r.status).toBe(429);
    expect(r.headers.get('retry-after')).toBe('3600');
    // Non-charging REST commands are unaffected.
    expect((await postRaw(app, `/api/1/vehicles/${V.legacy}/command/honk_horn`, '{}')).status).toBe(200);
  });

  test('REST-only managed charging counts too; VCSEC commands never do', async () => {
    const { app, owner } = makeSim({ limits: true });
    for (let i = 0; i < 5; i++) {
      expect((await postRaw(app, `/api/1/vehicles/${V.modern}/command/set_managed_charge_current_request`, '{"charging_amps": 16}')).status).toBe(200);
    }
    expect((await postRaw(app, `/api/1/vehicles/${V.modern}/command/set_managed_scheduled_charging_time`, '{"time": 60}')).status).toBe(429);
    const s = await handshake(app, owner, V.modern, VCSEC_DOMAIN);
    const lock = await sendRoutable(app, V.modern, sign(s, new Uint8Array([0x10, 0x01])).bytes); // RKEAction LOCK
    expect(lock.status).toBe(200);
  });

  test('limits off (limits:false, or POST /_sim/limits {enabled:false}) switches it off', async () => {
    const off = makeSim({ limits: false });
    for (let i = 0; i < 8; i++) {
      expect((await postRaw(off.app, `/api/1/vehicles/${V.legacy}/command/set_charge_limit`, `{"percent": ${60 + i}}`)).status).toBe(200);
    }
    const { app } = makeSim({ limits: true });
    for (let i = 0; i < 5; i++) await postRaw(app, `/api/1/vehicles/${V.legacy}/command/set_charge_limit`, `{"percent": ${60 + i}}`);
    expect((await postRaw(app, `/api/1/vehicles/${V.legacy}/command/set_charge_limit`, '{"percent": 70}')).status).toBe(429);
    expect((await postRaw(app, '/_sim/limits', '{"enabled": false}')).status).toBe(200);
    expect((await postRaw(app, `/api/1/vehicles/${V.legacy}/command/set_charge_limit`, '{"percent": 70}')).status).toBe(200);
  });
});
