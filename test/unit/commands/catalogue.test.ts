/**
 * The catalogue as a whole: every command name the issue lists (literally, so none can go
 * missing), modes, rejected bodies per command with a parameter, error envelopes.
 */
import { describe, expect, it } from 'vitest';
import { COMMANDS, findCommand, planCommand } from '../../../src/commands/index.js';

// The 72 commands of the spec's "Vehicle commands" table, pairs and groups expanded …
const SPEC_COMMANDS = [
  'actuate_trunk',
  'add_charge_schedule',
  'remove_charge_schedule',
  'add_precondition_schedule',
  'remove_precondition_schedule',
  'adjust_volume',
  'auto_conditioning_start',
  'auto_conditioning_stop',
  'cancel_software_update',
  'charge_max_range',
  'charge_port_door_close',
  'charge_port_door_open',
  'charge_standard',
  'charge_start',
  'charge_stop',
  'clear_pin_to_drive_admin',
  'door_lock',
  'door_unlock',
  'erase_user_data',
  'flash_lights',
  'honk_horn',
  'guest_mode',
  'media_next_fav',
  'media_prev_fav',
  'media_next_track',
  'media_prev_track',
  'media_toggle_playback',
  'media_volume_down',
  'media_volume_up',
  'navigation_gps_request',
  'navigation_request',
  'navigation_sc_request',
  'navigation_waypoints_request',
  'parental_controls_activate',
  'parental_controls_clear_pin_admin',
  'parental_controls_deactivate',
  'parental_controls_enable_setting',
  'parental_controls_set_speed_limit',
  'remote_auto_seat_climate_request',
  'remote_auto_steering_wheel_heat_climate_request',
  'remote_seat_cooler_request',
  'remote_seat_heater_request',
  'remote_steering_wheel_heat_level_request',
  'remote_steering_wheel_heater_request',
  'remote_boombox',
  'remote_start_drive',
  'reset_pin_to_drive_pin',
  'reset_valet_pin',
  'schedule_software_update',
  'set_bioweapon_mode',
  'set_cabin_overheat_protection',
  'set_charge_limit',
  'set_charging_amps',
  'set_climate_keeper_mode',
  'set_cop_temp',
  'set_pin_to_drive',
  'set_preconditioning_max',
  'set_scheduled_charging',
  'set_scheduled_departure',
  'set_sentry_mode',
  'set_temps',
  'set_valet_mode',
  'set_vehicle_name',
  'speed_limit_activate',
  'speed_limit_clear_pin',
  'speed_limit_clear_pin_admin',
  'speed_limit_deactivate',
  'speed_limit_set_limit',
  'sun_roof_control',
  'trigger_homelink',
  'upcoming_calendar_entries',
  'window_control',
];
// … and the reference proxy's extra ones.
const EXTRA_COMMANDS = [
  'wake_up',
  'open_tonneau',
  'close_tonneau',
  'stop_tonneau',
  'set_low_power_mode',
  'keep_accessory_power_mode',
  'set_managed_charge_current_request',
  'set_managed_charger_location',
  'set_managed_scheduled_charging_time',
];

// Commands with no vehicle-protocol message (checked against car_server.proto/vcsec.proto).
const REST_ONLY = [
  'navigation_request',
  'navigation_gps_request',
  'navigation_sc_request',
  'navigation_waypoints_request',
  'upcoming_calendar_entries',
  'remote_boombox',
  'remote_steering_wheel_heat_level_request',
  'remote_auto_steering_wheel_heat_climate_request',
  'set_managed_charge_current_request',
  'set_managed_charger_location',
  'set_managed_scheduled_charging_time',
];

/** A valid body for each REST-only command. */
const REST_BODIES: Record<string, unknown> = {
  navigation_request: { type: 'share_ext_content_raw', value: { 'android.intent.extra.TEXT': '1 Main St' }, locale: 'en-US', timestamp_ms: '1700000000000' },
  navigation_gps_request: { lat: 37.5, lon: -122.25, order: 1 },
  navigation_sc_request: { id: 1234, order: 0 },
  navigation_waypoints_request: { waypoints: 'refId:ChIJ1,refId:ChIJ2' },
  upcoming_calendar_entries: { calendar_data: 'opaque' },
  remote_boombox: { sound: 2000 },
  remote_steering_wheel_heat_level_request: { level: 1 },
  remote_auto_steering_wheel_heat_climate_request: { on: true },
  set_managed_charge_current_request: { charging_amps: 24 },
  set_managed_charger_location: { location: { lat: 37.5, lon: -122.25 } },
  set_managed_scheduled_charging_time: { time: 120 },
};

/** For every command with a parameter: a bad body and a field its `messages` must name. */
const REJECTED: [name: string, body: unknown, field: string][] = [
  ['actuate_trunk', {}, 'which_trunk'], // reference: opens the rear trunk
  ['actuate_trunk', { which_trunk: 1 }, 'which_trunk'], // reference: opens the rear trunk
  ['actuate_trunk', { which_trunk: 'side' }, 'which_trunk'],
  ['add_charge_schedule', { days_of_week: 'MON', enabled: true, start_enabled: true, end_enabled: false, lat: 1, lon: 1 }, 'start_time'],
  ['add_charge_schedule', { days_of_week: 'Funday', enabled: true, start_enabled: false, end_enabled: false, lat: 1, lon: 1 }, 'days_of_week'],
  ['add_charge_schedule', { days_of_week: 'MON', enabled: true, start_enabled: false, end_enabled: true, lat: 1, lon: 1 }, 'end_time'],
  ['remove_charge_schedule', { id: 'x' }, 'id'],
  ['add_precondition_schedule', { days_of_week: 'MON', enabled: true, lat: 1, lon: 1 }, 'precondition_time'],
  ['add_precondition_schedule', { days_of_week: 'MON', enabled: true, precondition_time: 1441, lat: 1, lon: 1 }, 'precondition_time'],
  ['remove_precondition_schedule', {}, 'id'],
  ['adjust_volume', { volume: 11 }, 'volume'],
  ['adjust_volume', { volume: '5' }, 'volume'],
  ['navigation_gps_request', { lat: 91, lon: 0 }, 'lat'],
  ['navigation_request', { type: 'share_ext_content_raw' }, 'value'],
  ['navigation_sc_request', { id: 'abc' }, 'id'],
  ['navigation_waypoints_request', { waypoints: 3 }, 'waypoints'],
  ['parental_controls_activate', { pin: '123' }, 'pin'],
  ['parental_controls_deactivate', { pin: 1234 }, 'pin'],
  ['parental_controls_enable_setting', { setting: 'Warp', enable: true }, 'setting'],
  ['parental_controls_enable_setting', { setting: 'Curfew' }, 'enable'],
  ['parental_controls_set_speed_limit', { limit_mph: 20 }, 'limit_mph'],
  ['remote_auto_seat_climate_request', { auto_seat_position: 3, auto_climate_on: true }, 'auto_seat_position'],
  ['remote_auto_steering_wheel_heat_climate_request', { on: 'yes' }, 'on'],
  ['remote_seat_cooler_request', { seat_position: 1 }, 'seat_cooler_level'],
  ['remote_seat_cooler_request', { seat_position: 1, seat_cooler_level: 4 }, 'seat_cooler_level'],
  ['remote_seat_heater_request', { seat_position: 9, level: 1 }, 'seat_position'],
  ['remote_seat_heater_request', { seat_position: 1, level: 1.5 }, 'level'],
  ['remote_steering_wheel_heat_level_request', { level: 7 }, 'level'],
  ['remote_steering_wheel_heater_request', {}, 'on'],
  ['remote_boombox', { sound: 1 }, 'sound'],
  ['schedule_software_update', { offset_sec: -1 }, 'offset_sec'],
  ['set_bioweapon_mode', { on: 1 }, 'on'],
  ['set_cabin_overheat_protection', { on: true, fan_only: 'no' }, 'fan_only'],
  ['set_charge_limit', { percent: 101 }, 'percent'],
  ['set_charge_limit', { percent: 49 }, 'percent'],
  ['set_charge_limit', { percent: 80.5 }, 'percent'],
  ['set_charging_amps', {}, 'charging_amps'],
  ['set_climate_keeper_mode', { climate_keeper_mode: 4 }, 'climate_keeper_mode'],
  ['set_cop_temp', { cop_temp: 3 }, 'cop_temp'],
  ['set_pin_to_drive', { on: true }, 'password'],
  ['set_pin_to_drive', { on: true, password: '12345' }, 'password'],
  ['set_preconditioning_max', { on: 'true' }, 'on'],
  ['set_scheduled_charging', { enable: true }, 'time'], // reference: midnight
  ['set_scheduled_departure', { enable: true }, 'departure_time'], // reference: midnight
  ['set_scheduled_departure', { enable: true, departure_time: 480, off_peak_charging_enabled: true }, 'end_off_peak_time'],
  ['set_sentry_mode', { on: null }, 'on'],
  ['set_temps', { driver_temp: 21 }, 'passenger_temp'], // reference: 0 °C
  ['set_temps', { passenger_temp: 21 }, 'driver_temp'], // reference: 0 °C
  ['set_temps', { driver_temp: 40, passenger_temp: 21 }, 'driver_temp'],
  ['set_valet_mode', { on: true }, 'password'],
  ['set_valet_mode', { on: true, password: 'abcd' }, 'password'],
  ['set_valet_mode', { password: '1234' }, 'on'],
  ['set_vehicle_name', { vehicle_name: '' }, 'vehicle_name'],
  ['speed_limit_activate', { pin: '12a4' }, 'pin'],
  ['speed_limit_clear_pin', {}, 'pin'],
  ['speed_limit_deactivate', { pin: ' 1234' }, 'pin'],
  ['speed_limit_set_limit', { limit_mph: 121 }, 'limit_mph'],
  ['sun_roof_control', { state: 'open' }, 'state'],
  ['trigger_homelink', { lat: 37.5 }, 'lon'],
  ['upcoming_calendar_entries', {}, 'calendar_data'],
  ['window_control', { command: 'open' }, 'command'],
  ['window_control', { command: 'close', lat: 'x' }, 'lat'],
  ['guest_mode', {}, 'enable'],
  ['set_low_power_mode', { enable: 'on' }, 'enable'],
  ['keep_accessory_power_mode', {}, 'enable'],
  ['set_managed_charge_current_request', { charging_amps: 'max' }, 'charging_amps'],
  ['set_managed_charger_location', { location: { lat: 37.5, lon: 200 } }, 'location.lon'],
  ['set_managed_scheduled_charging_time', { time: -5 }, 'time'],
];

describe('catalogue contents', () => {
  it('contains every listed command and exactly 81', () => {
    expect(SPEC_COMMANDS).toHaveLength(72);
    expect(EXTRA_COMMANDS).toHaveLength(9);
    const names = COMMANDS.map((c) => c.name);
    for (const n of [...SPEC_COMMANDS, ...EXTRA_COMMANDS]) expect(names, n).toContain(n);
    expect(names).toHaveLength(81);
    expect(new Set(names).size).toBe(81);
  });

  it('findCommand finds each command and nothing else', () => {
    for (const c of COMMANDS) expect(findCommand(c.name)).toBe(c);
    expect(findCommand('__proto__')).toBeUndefined();
    expect(findCommand('constructor')).toBeUndefined();
    expect(findCommand('DOOR_LOCK')).toBeUndefined();
  });

  it('REST-only commands are marked rest and plan rest', () => {
    const rest = COMMANDS.filter((c) => c.mode === 'rest').map((c) => c.name).sort();
    expect(rest).toEqual([...REST_ONLY].sort());
    for (const name of REST_ONLY) {
      const r = planCommand(name, REST_BODIES[name]);
      expect(r.ok ? r.plan : r.error.messages, name).toEqual({ kind: 'rest' });
      expect(findCommand(name)?.domain).toBeNull();
    }
  });

  it('wake_up plans wake', () => {
    const r = planCommand('wake_up', undefined);
    expect(r.ok && r.plan).toEqual({ kind: 'wake' });
    expect(findCommand('wake_up')?.mode).toBe('wake');
  });

  it('sun_roof_control is mixed: stop is forwarded, vent/close are signed', () => {
    expect(findCommand('sun_roof_control')?.mode).toBe('mixed');
    const stop = planCommand('sun_roof_control', { state: 'stop' });
    expect(stop.ok && stop.plan).toEqual({ kind: 'rest' });
    const vent = planCommand('sun_roof_control', { state: 'vent' });
    expect(vent.ok && vent.plan.kind).toBe('signed');
  });

  it('marks the documented owner-only commands', () => {
    expect(COMMANDS.filter((c) => c.ownerOnly).map((c) => c.name).sort()).toEqual([
      'clear_pin_to_drive_admin',
      'parental_controls_clear_pin_admin',
      'reset_pin_to_drive_pin',
      'speed_limit_clear_pin_admin',
    ]);
  });
});

describe('validation', () => {
  it.each(REJECTED)('%s rejects %j naming %s', (name, body, field) => {
    const r = planCommand(name, body);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.code).toBe('invalid_request');
    expect(r.error.status).toBe(400);
    expect(r.error.mayHaveSucceeded).toBe(false);
    expect(Object.keys(r.error.messages ?? {})).toContain(field);
    const env = r.error.toEnvelope();
    expect(env).toMatchObject({ response: null, error: 'invalid_request' });
    expect(env.messages?.[field]?.length).toBeGreaterThan(0);
  });

  it('has a rejected body for every command that takes a parameter', () => {
    const withParams = COMMANDS.filter((c) => planCommand(c.name, {}).ok === false || Object.keys(
      (c.schema as unknown as { shape?: object }).shape ?? {},
    ).length > 0).map((c) => c.name);
    expect(withParams.length).toBe(50); // 81 minus 31 commands without parameters
    const covered = new Set(REJECTED.map((r) => r[0]));
    expect(withParams.filter((n) => !covered.has(n))).toEqual([]);
  });

  it('accepts an absent body, null or {} for commands without parameters', () => {
    for (const body of [undefined, null, {}]) {
      expect(planCommand('honk_horn', body).ok).toBe(true);
      expect(planCommand('wake_up', body).ok).toBe(true);
    }
  });

  it('rejects a body that is not a JSON object, under "body"', () => {
    for (const body of ['x', 42, true, [], [{ on: true }]]) {
      const r = planCommand('honk_horn', body);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(Object.keys(r.error.messages ?? {})).toEqual(['body']);
    }
  });

  it('unknown names answer 400 invalid_command', () => {
    const r = planCommand('self_destruct', {});
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.code).toBe('invalid_command');
    expect(r.error.status).toBe(400);
  });

  it('names every bad field at once', () => {
    const r = planCommand('set_temps', { driver_temp: 'hot' });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(Object.keys(r.error.messages ?? {}).sort()).toEqual(['driver_temp', 'passenger_temp']);
  });

  it('never echoes PINs or passwords in errors', () => {
    const secret = '98765';
    for (const [name, body] of [
      ['speed_limit_activate', { pin: secret }],
      ['set_valet_mode', { on: true, password: secret }],
      ['set_pin_to_drive', { on: true, password: secret }],
      ['parental_controls_activate', { pin: secret }],
    ] as const) {
      const r = planCommand(name, body);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(JSON.stringify(r.error.toEnvelope()) + r.error.message).not.toContain(secret);
    }
  });

  it('accepts common day abbreviations (TUE, THU) that the reference rejects', () => {
    const base = { enabled: true, precondition_time: 60, lat: 0, lon: 0, id: 5 };
    for (const days of ['TUE', 'thu', 'Tues,Thurs', 'monday, Friday', 'WEEKDAYS', 'all']) {
      expect(planCommand('add_precondition_schedule', { ...base, days_of_week: days }).ok, days).toBe(true);
    }
    for (const days of ['', 'MON,', 'TU', 'MON;TUE']) {
      expect(planCommand('add_precondition_schedule', { ...base, days_of_week: days }).ok, days).toBe(false);
    }
  });

  it('checks four-digit PINs as exactly four digits', () => {
    for (const good of ['0000', '1234', '9999']) expect(planCommand('speed_limit_activate', { pin: good }).ok).toBe(true);
    for (const bad of ['123', '12345', '12 4', '１２３４', '-123', '']) {
      expect(planCommand('speed_limit_activate', { pin: bad }).ok, bad).toBe(false);
    }
  });
});
