/**
 * The spec's "States and transitions" tables, row by row, on the vehicle state model, plus
 * the charging/closure refusal reasons the spec names.
 */
import { describe, expect, test } from 'vitest';
import { VehicleState } from '../../../src/sim/state.js';
import type { RoleName, VehicleSpec } from '../../../src/sim/types.js';

function car(spec: Partial<VehicleSpec> = {}) {
  const timers: Array<{ ms: number; fn: () => void }> = [];
  const s = new VehicleState(
    { vin: '5YJ3E1EA8MF000002', firmware: '2024.44.25', ...spec },
    { now: () => 1_700_000_000_000, schedule: (ms, fn) => timers.push({ ms, fn }), timeScale: 10 },
  );
  const run = (name: string, params: Record<string, unknown> = {}, role: RoleName = 'owner') => s.execute({ name, params }, role);
  return { s, run, timers };
}
const OK = { kind: 'ok' };
const refused = (reason: string) => ({ kind: 'refused', reason });

describe('parental controls', () => {
  test('inactive + activate with a four-digit PIN → active', () => {
    const { s, run } = car();
    expect(run('parental_controls_activate', { pin: '1234' })).toEqual(OK);
    expect(s.parental.active).toBe(true);
    expect(run('parental_controls_activate', { pin: '12a4' })).toEqual(refused('invalid_pin'));
  });
  test('a PIN set earlier must be reused; clear it with the admin command to choose a new one', () => {
    const { s, run } = car();
    run('parental_controls_activate', { pin: '1234' });
    expect(run('parental_controls_deactivate', { pin: '1234' })).toEqual(OK);
    expect(run('parental_controls_activate', { pin: '9999' })).toEqual(refused('invalid_pin'));
    expect(s.parental.active).toBe(false);
    expect(run('parental_controls_clear_pin_admin')).toEqual(OK);
    expect(run('parental_controls_activate', { pin: '9999' })).toEqual(OK);
  });
  test('active + activate with the current PIN succeeds and stays active; another PIN fails', () => {
    const { s, run } = car();
    run('parental_controls_activate', { pin: '1234' });
    expect(run('parental_controls_activate', { pin: '1234' })).toEqual(OK);
    expect(run('parental_controls_activate', { pin: '4321' })).toEqual(refused('invalid_pin'));
    expect(s.parental.active).toBe(true);
  });
  test('active + deactivate needs the current PIN', () => {
    const { s, run } = car();
    run('parental_controls_activate', { pin: '1234' });
    expect(run('parental_controls_deactivate', { pin: '0000' })).toEqual(refused('invalid_pin'));
    expect(s.parental.active).toBe(true);
    expect(run('parental_controls_deactivate', { pin: '1234' })).toEqual(OK);
    expect(s.parental.active).toBe(false);
  });
  test('active + enable_setting or set_speed_limit → parental_controls_active; configure before activating', () => {
    const { s, run } = car();
    expect(run('parental_controls_set_speed_limit', { limit_mph: 60 })).toEqual(refused('speed_limit_setting_disabled'));
    expect(run('parental_controls_enable_setting', { setting: 'SpeedLimit', enable: true })).toEqual(OK);
    expect(run('parental_controls_set_speed_limit', { limit_mph: 60 })).toEqual(OK);
    run('parental_controls_activate', { pin: '1234' });
    expect(run('parental_controls_enable_setting', { setting: 'Curfew', enable: true })).toEqual(refused('parental_controls_active'));
    expect(run('parental_controls_set_speed_limit', { limit_mph: 70 })).toEqual(refused('parental_controls_active'));
    expect(s.parental.speedLimitMph).toBe(60);
  });
  test('clear_pin_admin is owner/fleet-manager only', () => {
    const { run } = car();
    expect(run('parental_controls_clear_pin_admin', {}, 'driver')).toMatchObject({ kind: 'fault', fault: 7 });
    expect(run('parental_controls_clear_pin_admin', {}, 'fleet_manager')).toEqual(OK);
  });
});

describe('speed limit mode', () => {
  test('activate (four-digit PIN), deactivate (PIN), clear_pin (PIN), clear_pin_admin (no PIN)', () => {
    const { s, run } = car();
    expect(run('speed_limit_activate', { pin: '12' })).toEqual(refused('invalid_pin'));
    expect(run('speed_limit_activate', { pin: '1234' })).toEqual(OK);
    expect(s.speedLimit).toMatchObject({ active: true, pin: '1234' });
    expect(run('speed_limit_set_limit', { limit_mph: 70 })).toEqual(refused('speed_limit_active'));
    expect(run('speed_limit_deactivate', { pin: '0000' })).toEqual(refused('invalid_pin'));
    expect(run('speed_limit_deactivate', { pin: '1234' })).toEqual(OK);
    expect(s.speedLimit.active).toBe(false);
    expect(run('speed_limit_set_limit', { limit_mph: 70 })).toEqual(OK);
    expect(run('speed_limit_activate', { pin: '5555' })).toEqual(refused('invalid_pin'));
    expect(run('speed_limit_activate', { pin: '1234' })).toEqual(OK);
    expect(run('speed_limit_clear_pin', { pin: '1234' })).toEqual(OK);
    expect(s.speedLimit).toMatchObject({ active: false, pin: null });
    run('speed_limit_activate', { pin: '7777' });
    expect(run('speed_limit_clear_pin_admin', {}, 'driver')).toMatchObject({ kind: 'fault', fault: 7 });
    expect(run('speed_limit_clear_pin_admin')).toEqual(OK);
    expect(s.speedLimit).toMatchObject({ active: false, pin: null });
  });
  test('speed_limit_clear_pin_admin needs firmware above 2023.38', () => {
    const { run } = car({ firmware: '2023.38.1' });
    expect(run('speed_limit_clear_pin_admin')).toMatchObject({ kind: 'fault', fault: 9 });
  });
});

describe('valet mode', () => {
  test('off + set_valet_mode with a four-digit password → on; the password turns it off', () => {
    const { s, run } = car();
    expect(run('set_valet_mode', { on: true, password: 'abcd' })).toEqual(refused('invalid_password'));
    expect(run('set_valet_mode', { on: true, password: '1234' })).toEqual(OK);
    expect(s.valet.on).toBe(true);
    expect(run('set_valet_mode', { on: false, password: '9999' })).toEqual(refused('invalid_password'));
    expect(run('set_valet_mode', { on: false, password: '1234' })).toEqual(OK);
    expect(s.valet.on).toBe(false);
  });
  test('reset_valet_pin needs valet mode off', () => {
    const { s, run } = car();
    run('set_valet_mode', { on: true, password: '1234' });
    expect(run('reset_valet_pin')).toEqual(refused('valet_mode_active'));
    run('set_valet_mode', { on: false, password: '1234' });
    expect(run('reset_valet_pin')).toEqual(OK);
    expect(s.valet.password).toBeNull();
  });
});

describe('PIN to drive', () => {
  test('set when no PIN is stored; remembered when disabled; later new PINs are discarded', () => {
    const { s, run } = car();
    expect(run('set_pin_to_drive', { on: true, password: '1111' })).toEqual(OK);
    expect(s.pinToDrive).toEqual({ enabled: true, pin: '1111' });
    expect(run('set_pin_to_drive', { on: false })).toEqual(OK);
    expect(s.pinToDrive).toEqual({ enabled: false, pin: '1111' });
    expect(run('set_pin_to_drive', { on: true, password: '2222' })).toEqual(OK);
    expect(s.pinToDrive).toEqual({ enabled: true, pin: '1111' });
  });
  test('reset_pin_to_drive_pin: only in PIN-to-drive mode and not in valet mode; then a new PIN can be set', () => {
    const { s, run } = car();
    expect(run('reset_pin_to_drive_pin')).toEqual(refused('pin_to_drive_not_enabled'));
    run('set_pin_to_drive', { on: true, password: '1111' });
    run('set_valet_mode', { on: true, password: '4321' });
    expect(run('reset_pin_to_drive_pin')).toEqual(refused('valet_mode_active'));
    run('set_valet_mode', { on: false, password: '4321' });
    expect(run('reset_pin_to_drive_pin', {}, 'driver')).toMatchObject({ kind: 'fault', fault: 7 });
    expect(run('reset_pin_to_drive_pin')).toEqual(OK);
    expect(run('set_pin_to_drive', { on: true, password: '2222' })).toEqual(OK);
    expect(s.pinToDrive.pin).toBe('2222');
  });
  test('clear_pin_to_drive_admin deactivates and resets; needs firmware above 2023.44', () => {
    const { s, run } = car();
    run('set_pin_to_drive', { on: true, password: '1111' });
    expect(run('clear_pin_to_drive_admin')).toEqual(OK);
    expect(s.pinToDrive).toEqual({ enabled: false, pin: null });
    expect(car({ firmware: '2023.44.30' }).run('clear_pin_to_drive_admin')).toMatchObject({ kind: 'fault', fault: 9 });
  });
});

describe('guest mode and software update', () => {
  test('guest mode on/off; needs 2024.14; vehicle name not supported in guest mode', () => {
    const { s, run } = car();
    expect(run('guest_mode', { enable: true })).toEqual(OK);
    expect(s.guestMode).toBe(true);
    expect(run('set_vehicle_name', { vehicle_name: 'x' })).toEqual(refused('not_supported'));
    expect(run('guest_mode', { enable: false })).toEqual(OK);
    expect(run('set_vehicle_name', { vehicle_name: 'Roadrunner' })).toEqual(OK);
    expect(s.vehicleName).toBe('Roadrunner');
    expect(car({ firmware: '2024.8.9' }).run('guest_mode', { enable: true })).toMatchObject({ kind: 'fault', fault: 9 });
  });
  test('schedule → countdown (scaled) → installing; cancel works before, not after', () => {
    const { s, run, timers } = car();
    expect(run('schedule_software_update', { offset_sec: 120 })).toEqual(OK);
    expect(s.update.status).toBe('scheduled');
    expect(timers[0]?.ms).toBe(12_000); // 120 s ÷ time scale 10
    expect(run('cancel_software_update')).toEqual(OK);
    expect(s.update.status).toBe('available');
    timers[0]!.fn(); // the cancelled countdown firing changes nothing
    expect(s.update.status).toBe('available');
    run('schedule_software_update', { offset_sec: 0 });
    timers[1]!.fn();
    expect(s.update.status).toBe('installing');
    expect(run('cancel_software_update')).toEqual(refused('installing'));
    expect(car({ update_available: null }).run('schedule_software_update', { offset_sec: 5 })).toEqual(refused('no_update_available'));
  });
});

describe('charging and closures', () => {
  test('charge limit: already_set; standard/max range: already_started', () => {
    const { s, run } = car({ charge_limit_soc: 80 });
    expect(run('set_charge_limit', { percent: 80 })).toEqual(refused('already_set'));
    expect(run('set_charge_limit', { percent: 85 })).toEqual(OK);
    expect(s.chargeLimit).toBe(85);
    expect(run('charge_standard')).toEqual(OK);
    expect(run('charge_standard')).toEqual(refused('already_started'));
    expect(run('charge_max_range')).toEqual(OK);
    expect(run('charge_max_range')).toEqual(refused('already_started'));
  });
  test('charge_start/stop by charging state', () => {
    expect(car({ charging_state: 'Disconnected' }).run('charge_start')).toEqual(refused('disconnected'));
    expect(car({ charging_state: 'Complete' }).run('charge_start')).toEqual(refused('complete'));
    expect(car({ charging_state: 'NoPower' }).run('charge_start')).toEqual(refused('no_power'));
    const { s, run } = car({ charging_state: 'Stopped', battery_level: 40, charge_limit_soc: 80 });
    expect(run('charge_stop')).toEqual(refused('not_charging'));
    expect(run('charge_start')).toEqual(OK);
    expect(s.chargingState).toBe('Charging');
    expect(run('charge_start')).toEqual(refused('is_charging'));
    expect(run('charge_stop')).toEqual(OK);
    expect(s.chargingState).toBe('Stopped');
  });
  test('charge port door close: cable connected / already closed', () => {
    expect(car({ charging_state: 'Stopped' }).run('charge_port_door_close')).toEqual(refused('cable_connected'));
    const { run } = car({ charging_state: 'Disconnected' });
    expect(run('charge_port_door_close')).toEqual(refused('already_closed'));
    expect(run('charge_port_door_open')).toEqual(OK);
    expect(run('charge_port_door_close')).toEqual(OK);
    expect(car({ model: 'S', year: 2017, charging_state: 'Disconnected' }).run('charge_port_door_close')).toEqual(refused('no_electric_charge_port'));
  });
  test('amps are clamped to the charger maximum', () => {
    const { s, run } = car({ charge_current_max: 32 });
    run('set_charging_amps', { charging_amps: 48 });
    expect(s.chargeAmps).toBe(32);
  });
  test('seat heaters need climate on (or keeper); climate keeper modes; temperatures', () => {
    const { s, run } = car();
    expect(run('remote_seat_heater_request', { seat_position: 0, seat_heater_level: 3 })).toMatchObject({ kind: 'refused' });
    run('set_climate_keeper_mode', { climate_keeper_mode: 2 });
    expect(s.keeperMode).toBe('dog');
    expect(run('remote_seat_heater_request', { seat_position: 0, seat_heater_level: 3 })).toEqual(OK);
    expect(s.seatHeaters.seat_heater_left).toBe(3);
    run('set_temps', { driver_temp: 22.5, passenger_temp: 19 });
    expect([s.driverTemp, s.passengerTemp]).toEqual([22.5, 19]);
  });
  test('trunks, windows, sentry, volume, homelink', () => {
    const { s, run } = car({ has_homelink: false });
    run('actuate_trunk', { which_trunk: 'rear' });
    expect(s.rt).toBe(1);
    run('actuate_trunk', { which_trunk: 'rear' });
    expect(s.rt).toBe(0);
    run('window_control', { command: 'vent' });
    expect(s.windows.fd_window).toBe(1);
    run('set_sentry_mode', { on: true });
    expect(s.sentry).toBe(true);
    expect(run('adjust_volume', { volume: 5 })).toEqual(OK);
    expect(s.volume).toBe(5);
    expect(run('trigger_homelink', { lat: 1, lon: 2 })).toEqual(refused('not_supported'));
    expect(car({ user_present: false }).run('adjust_volume', { volume: 5 })).toEqual(refused('user_not_present'));
  });
  test('roles: vehicle monitor cannot command; charging manager only charging', () => {
    const { run } = car();
    expect(run('door_lock', {}, 'vehicle_monitor')).toMatchObject({ kind: 'fault', fault: 7 });
    expect(run('door_lock', {}, 'charging_manager')).toMatchObject({ kind: 'fault', fault: 7 });
    expect(run('set_charging_amps', { charging_amps: 10 }, 'charging_manager')).toEqual(OK);
  });
});

describe('vehicle_data', () => {
  test('reports the model and omits location when asked to', () => {
    const { s, run } = car();
    run('door_lock');
    const with_ = s.vehicleData({}, true, 0) as any;
    const without = s.vehicleData({}, false, 0) as any;
    expect(with_.vehicle_state.locked).toBe(true);
    expect(with_.drive_state.latitude).toBeTypeOf('number');
    expect(without.drive_state).not.toHaveProperty('latitude');
    expect(without.drive_state).not.toHaveProperty('native_longitude');
  });
});
