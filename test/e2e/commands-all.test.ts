/**
 * Issue 4's end-to-end requirement: every command of the catalogue (`COMMANDS`, 81) answers
 * through `vcproxy serve` (startProxy) in front of the fleet simulator (startSim):
 *
 * - signed commands are verified and executed by a protocol-correct vehicle, and the
 *   simulator's own decoding (src/sim/decode.ts, independent of src/commands) logs the
 *   right action and fields; where the command changes something visible, vehicle_data
 *   (read back through the proxy) shows it changed — the value is checked to differ
 *   before and to match after;
 * - REST-forwarded commands reach the simulator's `command/{name}` endpoint with the body
 *   byte for byte (the log's keyed body digest equals the digest of what we sent; the
 *   bodies use odd spacing, unicode and unknown fields so a re-serialisation would show);
 * - wake_up wakes an asleep vehicle.
 *
 * Each case sets its own preconditions on the simulated vehicle's state, so cases do not
 * depend on one another's order. The table is keyed by command name, and the test fails if
 * a catalogue command has no case (or a case names no catalogue command).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig, type ProxyConfig } from '../../src/config.js';
import { startProxy, type RunningProxy } from '../../src/cli/serve.js';
import { COMMANDS, planCommand, type Area } from '../../src/commands/index.js';
import { Domain } from '../../src/protocol/domains.js';
import { loadKeyFile } from '../../src/keys/index.js';
import { DEFAULT_FLEET, DEFAULT_FLEET_VINS, startSim, type RunningSim, type SimLogEntry } from '../../src/sim/index.js';
import { REST_COMMANDS, SERVICE_REST_COMMANDS, type VehicleState } from '../../src/sim/state.js';
import { exampleKeyFile, fakeJwt } from './proxy-fake-upstream.js';
import { withoutNoise } from '../support/log-noise.js';

/** A Cybertruck (tonneau), with HomeLink, a present user, a pending update and the cable in. */
const VIN = '7G2CEHEE0RA000007';
const ASLEEP: string = DEFAULT_FLEET_VINS.asleep;
const FLEET = {
  vehicles: [
    ...DEFAULT_FLEET.vehicles,
    {
      vin: VIN,
      model: 'Cybertruck',
      year: 2024,
      firmware: '2024.44.25',
      state: 'online' as const,
      display_name: 'Sim Truck',
      has_homelink: true,
      user_present: true,
      charging_state: 'Stopped',
      battery_level: 60,
      charge_limit_soc: 80,
      update_available: '2025.2.6',
    },
  ],
};
const AUTH = { authorization: `Bearer ${fakeJwt({ sub: 'catalogue-e2e' })}`, 'content-type': 'application/json' };

// Exactly representable in float32 (the protocol's lat/lon and temperature fields).
const LAT = 37.5;
const LON = -122.25;

type VD = Record<string, any>;

interface Case {
  /** Catalogue name. */
  name: string;
  /** JSON body; `raw` wins when both are given. Absent = no body. */
  body?: unknown;
  /** Exact request text (REST-forwarded cases: odd spacing, unicode, unknown fields). */
  raw?: string;
  /** Label when a name has more than one case (mixed commands). */
  label?: string;
  /** Preconditions on the vehicle (so the command is expected to execute). */
  before?: (s: VehicleState) => void;
  /** Signed: what the vehicle decoded (command name defaults to `name`; params is a subset). */
  decoded?: { command?: string; params?: Record<string, unknown> };
  /**
   * vehicle_data value that the command changes: must differ from `want` before, equal
   * after. `query` is appended to the vehicle_data URL (location needs location_data).
   */
  vd?: { read: (vd: VD) => unknown; want: unknown; query?: string };
  /** Extra assertions on the vehicle's model state (things vehicle_data does not show). */
  after?: (s: VehicleState) => void;
}

const vs = (vd: VD): VD => vd.vehicle_state as VD;
const cs = (vd: VD): VD => vd.charge_state as VD;
const cl = (vd: VD): VD => vd.climate_state as VD;

const CASES: Case[] = [
  // ---------------------------------------------------------------- security
  { name: 'door_lock', before: (s) => void (s.locked = false), decoded: { params: {} }, vd: { read: (d) => vs(d).locked, want: true } },
  { name: 'door_unlock', before: (s) => void (s.locked = true), vd: { read: (d) => vs(d).locked, want: false } },
  { name: 'remote_start_drive', vd: { read: (d) => vs(d).remote_start, want: true } },
  { name: 'set_sentry_mode', body: { on: true }, decoded: { params: { on: true } }, vd: { read: (d) => vs(d).sentry_mode, want: true } },
  {
    name: 'guest_mode',
    body: { enable: true },
    decoded: { params: { enable: true } },
    vd: { read: (d) => vs(d).guest_mode_enabled, want: true },
  },
  // ---------------------------------------------------------------- access
  {
    name: 'set_valet_mode',
    body: { on: true, password: '1234' },
    before: (s) => void (s.valet = { on: false, password: null }),
    // The PIN reaches the vehicle (it is stored) but never the log.
    decoded: { params: { on: true, password: '[redacted]' } },
    vd: { read: (d) => vs(d).valet_mode, want: true },
    after: (s) => expect(s.valet.password).toBe('1234'),
  },
  {
    name: 'reset_valet_pin',
    before: (s) => void (s.valet = { on: false, password: '1234' }),
    vd: { read: (d) => vs(d).valet_pin_needed, want: false },
  },
  {
    name: 'set_pin_to_drive',
    body: { on: true, password: '4321' },
    before: (s) => {
      s.valet = { on: false, password: null };
      s.pinToDrive = { enabled: false, pin: null };
    },
    decoded: { params: { on: true, password: '[redacted]' } },
    vd: { read: (d) => vs(d).pin_to_drive_enabled, want: true },
    after: (s) => expect(s.pinToDrive.pin).toBe('4321'),
  },
  {
    name: 'reset_pin_to_drive_pin',
    before: (s) => {
      s.valet = { on: false, password: null };
      s.pinToDrive = { enabled: true, pin: '4321' };
    },
    vd: { read: (d) => vs(d).pin_to_drive_pin_set, want: false },
  },
  {
    name: 'clear_pin_to_drive_admin',
    before: (s) => void (s.pinToDrive = { enabled: true, pin: '4321' }),
    vd: { read: (d) => vs(d).pin_to_drive_enabled, want: false },
  },
  {
    name: 'speed_limit_activate',
    body: { pin: '1111' },
    before: (s) => void (s.speedLimit = { active: false, pin: null, limitMph: 85 }),
    decoded: { params: { pin: '[redacted]' } },
    vd: { read: (d) => vs(d).speed_limit_mode.active, want: true },
    after: (s) => expect(s.speedLimit.pin).toBe('1111'),
  },
  {
    name: 'speed_limit_deactivate',
    body: { pin: '1111' },
    before: (s) => void (s.speedLimit = { active: true, pin: '1111', limitMph: 85 }),
    decoded: { command: 'speed_limit_deactivate', params: { pin: '[redacted]' } },
    vd: { read: (d) => vs(d).speed_limit_mode.active, want: false },
  },
  {
    name: 'speed_limit_clear_pin',
    body: { pin: '1111' },
    before: (s) => void (s.speedLimit = { active: true, pin: '1111', limitMph: 85 }),
    vd: { read: (d) => vs(d).speed_limit_mode.pin_code_set, want: false },
  },
  {
    name: 'speed_limit_clear_pin_admin',
    before: (s) => void (s.speedLimit = { active: true, pin: '1111', limitMph: 85 }),
    vd: { read: (d) => vs(d).speed_limit_mode.pin_code_set, want: false },
  },
  {
    name: 'speed_limit_set_limit',
    body: { limit_mph: 70 },
    before: (s) => void (s.speedLimit = { active: false, pin: null, limitMph: 85 }),
    decoded: { params: { limit_mph: 70 } },
    vd: { read: (d) => vs(d).speed_limit_mode.current_limit_mph, want: 70 },
  },
  {
    name: 'parental_controls_activate',
    body: { pin: '2222' },
    before: (s) => Object.assign(s.parental, { active: false, pin: null }),
    decoded: { params: { pin: '[redacted]' } },
    vd: { read: (d) => vs(d).parental_controls.active, want: true },
    after: (s) => expect(s.parental.pin).toBe('2222'),
  },
  {
    name: 'parental_controls_deactivate',
    body: { pin: '2222' },
    before: (s) => Object.assign(s.parental, { active: true, pin: '2222' }),
    decoded: { command: 'parental_controls_deactivate' },
    vd: { read: (d) => vs(d).parental_controls.active, want: false },
  },
  {
    name: 'parental_controls_clear_pin_admin',
    before: (s) => Object.assign(s.parental, { active: true, pin: '2222' }),
    vd: { read: (d) => vs(d).parental_controls.pin_set, want: false },
  },
  {
    name: 'parental_controls_enable_setting',
    body: { setting: 'SpeedLimit', enable: true },
    before: (s) => {
      Object.assign(s.parental, { active: false });
      s.parental.settings.SpeedLimit = false;
    },
    decoded: { params: { setting: 'SpeedLimit', enable: true } },
    vd: { read: (d) => vs(d).parental_controls.settings.SpeedLimit, want: true },
  },
  {
    name: 'parental_controls_set_speed_limit',
    body: { limit_mph: 60 },
    before: (s) => {
      Object.assign(s.parental, { active: false });
      s.parental.settings.SpeedLimit = true;
    },
    decoded: { params: { limit_mph: 60 } },
    vd: { read: (d) => vs(d).parental_controls.speed_limit_mph, want: 60 },
  },
  // ---------------------------------------------------------------- closures
  {
    name: 'actuate_trunk',
    body: { which_trunk: 'rear' },
    before: (s) => void (s.rt = 0),
    decoded: { params: { which_trunk: 'rear', move: 'move' } },
    vd: { read: (d) => vs(d).rt, want: 1 },
  },
  { name: 'open_tonneau', decoded: { params: {} } },
  { name: 'close_tonneau', decoded: { params: {} } },
  { name: 'stop_tonneau', decoded: { params: {} } },
  {
    name: 'window_control',
    body: { command: 'vent', lat: LAT, lon: LON },
    before: (s) => void (s.windows = { fd_window: 0, fp_window: 0, rd_window: 0, rp_window: 0 }),
    decoded: { params: { command: 'vent' } },
    vd: { read: (d) => vs(d).fd_window, want: 1 },
  },
  {
    name: 'sun_roof_control',
    label: 'vent (signed)',
    body: { state: 'vent' },
    before: (s) => void (s.sunRoofState = 'closed'),
    decoded: { params: { state: 'vent' } },
    vd: { read: (d) => vs(d).sun_roof_state, want: 'vent' },
  },
  {
    name: 'sun_roof_control',
    label: 'stop (forwarded)',
    raw: '{ "state" : "stop", "note": "an unknown field travels too" }',
  },
  // ---------------------------------------------------------------- charging
  {
    name: 'charge_start',
    before: (s) => {
      s.chargingState = 'Stopped';
      s.batteryLevel = 60;
      s.chargeLimit = 80;
    },
    vd: { read: (d) => cs(d).charging_state, want: 'Charging' },
  },
  { name: 'charge_stop', before: (s) => void (s.chargingState = 'Charging'), vd: { read: (d) => cs(d).charging_state, want: 'Stopped' } },
  { name: 'charge_standard', before: (s) => void (s.chargeLimit = 80), vd: { read: (d) => cs(d).charge_limit_soc, want: 90 } },
  { name: 'charge_max_range', before: (s) => void (s.chargeLimit = 80), vd: { read: (d) => cs(d).charge_limit_soc, want: 100 } },
  {
    name: 'charge_port_door_open',
    before: (s) => void (s.chargePortOpen = false),
    vd: { read: (d) => cs(d).charge_port_door_open, want: true },
  },
  {
    name: 'charge_port_door_close',
    before: (s) => {
      s.chargingState = 'Disconnected';
      s.chargePortOpen = true;
    },
    vd: { read: (d) => cs(d).charge_port_door_open, want: false },
  },
  {
    name: 'set_charge_limit',
    body: { percent: 80 },
    before: (s) => {
      s.chargingState = 'Stopped';
      s.chargeLimit = 70;
    },
    decoded: { params: { percent: 80 } },
    vd: { read: (d) => cs(d).charge_limit_soc, want: 80 },
  },
  {
    name: 'set_charging_amps',
    body: { charging_amps: 12 },
    decoded: { params: { charging_amps: 12 } },
    vd: { read: (d) => cs(d).charge_amps, want: 12 },
  },
  { name: 'set_managed_charge_current_request', raw: '{"charging_amps" :16}' },
  { name: 'set_managed_charger_location', raw: '{ "location": {"lat": 37.4925, "lon": -121.9447} }' },
  { name: 'set_managed_scheduled_charging_time', raw: '{"time": 480 }' },
  // ---------------------------------------------------------------- climate
  {
    name: 'auto_conditioning_start',
    before: (s) => void (s.climateOn = false),
    decoded: { command: 'auto_conditioning_start' },
    vd: { read: (d) => cl(d).is_climate_on, want: true },
  },
  {
    name: 'auto_conditioning_stop',
    before: (s) => void (s.climateOn = true),
    decoded: { command: 'auto_conditioning_stop' },
    vd: { read: (d) => cl(d).is_climate_on, want: false },
  },
  {
    name: 'set_temps',
    body: { driver_temp: 22.5, passenger_temp: 20 },
    decoded: { params: { driver_temp: 22.5, passenger_temp: 20 } },
    vd: { read: (d) => [cl(d).driver_temp_setting, cl(d).passenger_temp_setting], want: [22.5, 20] },
  },
  {
    name: 'set_preconditioning_max',
    body: { on: true },
    decoded: { params: { on: true } },
    vd: { read: (d) => cl(d).is_preconditioning, want: true },
  },
  {
    name: 'set_bioweapon_mode',
    body: { on: true },
    decoded: { params: { on: true } },
    vd: { read: (d) => cl(d).bioweapon_mode, want: true },
  },
  {
    name: 'set_cabin_overheat_protection',
    body: { on: true, fan_only: true },
    decoded: { params: { on: true, fan_only: true } },
    vd: { read: (d) => cl(d).cabin_overheat_protection, want: 'FanOnly' },
  },
  {
    name: 'set_climate_keeper_mode',
    body: { climate_keeper_mode: 2 },
    decoded: { params: { climate_keeper_mode: 2 } },
    vd: { read: (d) => cl(d).climate_keeper_mode, want: 'dog' },
  },
  {
    name: 'set_cop_temp',
    body: { cop_temp: 1 },
    decoded: { params: { cop_temp: 1 } },
    vd: { read: (d) => cl(d).cop_activation_temperature, want: 'Medium' },
  },
  {
    name: 'remote_seat_heater_request',
    body: { seat_position: 1, level: 3 },
    before: (s) => void (s.climateOn = true),
    decoded: { params: { seat_position: 1, seat_heater_level: 3 } },
    vd: { read: (d) => cl(d).seat_heater_right, want: 3 },
  },
  {
    name: 'remote_seat_cooler_request',
    body: { seat_position: 1, seat_cooler_level: 2 },
    before: (s) => void (s.climateOn = true),
    decoded: { params: { seat_position: 1, seat_cooler_level: 2 } },
    vd: { read: (d) => cl(d).seat_fan_front_left, want: 2 },
  },
  {
    name: 'remote_auto_seat_climate_request',
    body: { auto_seat_position: 2, auto_climate_on: true },
    before: (s) => void (s.climateOn = true),
    decoded: { params: { auto_seat_position: 2, auto_climate_on: true } },
    vd: { read: (d) => cl(d).auto_seat_climate_right, want: true },
  },
  {
    name: 'remote_steering_wheel_heater_request',
    body: { on: true },
    before: (s) => {
      s.climateOn = true;
      s.steeringWheelHeater = false;
    },
    decoded: { params: { on: true } },
    vd: { read: (d) => cl(d).steering_wheel_heater, want: true },
  },
  {
    name: 'remote_steering_wheel_heat_level_request',
    raw: '{"level":  1}',
    before: (s) => {
      s.climateOn = true;
      s.steeringWheelHeater = false;
    },
    vd: { read: (d) => cl(d).steering_wheel_heater, want: true },
  },
  {
    name: 'remote_auto_steering_wheel_heat_climate_request',
    raw: '{ "on": true }',
    before: (s) => void (s.climateOn = true),
  },
  // ---------------------------------------------------------------- media
  {
    name: 'adjust_volume',
    body: { volume: 5.5 },
    decoded: { params: { volume: 5.5 } },
    vd: { read: (d) => vs(d).media_info.audio_volume, want: 5.5 },
  },
  {
    name: 'media_toggle_playback',
    before: (s) => void (s.mediaPlaying = false),
    vd: { read: (d) => vs(d).media_info.media_playback_status, want: 'Playing' },
  },
  { name: 'media_next_track' },
  { name: 'media_prev_track' },
  { name: 'media_next_fav' },
  { name: 'media_prev_fav' },
  {
    name: 'media_volume_up',
    before: (s) => void (s.volume = 3),
    decoded: { params: { volume_delta: 1 } },
    vd: { read: (d) => vs(d).media_info.audio_volume, want: 3.333 },
  },
  {
    name: 'media_volume_down',
    before: (s) => void (s.volume = 3),
    decoded: { params: { volume_delta: -1 } },
    vd: { read: (d) => vs(d).media_info.audio_volume, want: 2.667 },
  },
  { name: 'remote_boombox', raw: '{"sound":2000}' },
  // ---------------------------------------------------------------- navigation
  {
    name: 'navigation_request',
    raw: '{"type":"share_ext_content_raw", "value": {"android.intent.extra.TEXT": "1 Hacker Way, Menlo Park – café ✓"}, "locale":"en-US", "timestamp_ms":"1700000000000"}',
    before: (s) => void (s.activeRoute = null),
    vd: { query: '?endpoints=location_data', read: (d) => d.drive_state.active_route_destination, want: '1 Hacker Way, Menlo Park – café ✓' },
  },
  {
    name: 'navigation_gps_request',
    raw: '{ "lat": 37.4925, "lon": -121.9447 , "order": 1 }',
    before: (s) => void (s.activeRoute = null),
    vd: {
      query: '?endpoints=location_data',
      read: (d) => [d.drive_state.active_route_latitude, d.drive_state.active_route_longitude],
      want: [37.4925, -121.9447],
    },
  },
  {
    name: 'navigation_sc_request',
    raw: '{"id": 1234,"order":0}',
    vd: { query: '?endpoints=location_data', read: (d) => d.drive_state.active_route_destination, want: 'Supercharger 1234' },
  },
  { name: 'navigation_waypoints_request', raw: '{"waypoints":"refId:ChIJ1a,refId:ChIJ2b"}' },
  { name: 'upcoming_calendar_entries', raw: '{"calendar_data":"BEGIN:VCALENDAR\\nEND:VCALENDAR"}' },
  // ---------------------------------------------------------------- software
  {
    name: 'schedule_software_update',
    // A day: far beyond the test's lifetime even at time scale 1000.
    body: { offset_sec: 86_400 },
    decoded: { params: { offset_sec: 86_400 } },
    vd: { read: (d) => vs(d).software_update.status, want: 'scheduled' },
  },
  {
    name: 'cancel_software_update',
    before: (s) => void s.execute({ name: 'schedule_software_update', params: { offset_sec: 86_400 } }, 'owner'),
    vd: { read: (d) => vs(d).software_update.status, want: 'available' },
  },
  // ---------------------------------------------------------------- schedules
  {
    name: 'add_charge_schedule',
    body: { days_of_week: 'MON,TUE', enabled: true, start_enabled: true, start_time: 120, end_enabled: false, lat: LAT, lon: LON, id: 42 },
    decoded: {
      // end_enabled false and end_time 0 are proto3 defaults (not on the wire) and must still decode.
      params: { id: 42, days_of_week: 'MON,TUE', enabled: true, start_enabled: true, start_time: 120, end_enabled: false, end_time: 0, one_time: false, lat: LAT, lon: LON },
    },
    after: (s) => expect(s.chargeSchedules.has(42)).toBe(true),
  },
  {
    name: 'remove_charge_schedule',
    body: { id: 42 },
    before: (s) => void s.chargeSchedules.set(42, { id: 42 }),
    decoded: { params: { id: 42 } },
    after: (s) => expect(s.chargeSchedules.has(42)).toBe(false),
  },
  {
    name: 'add_precondition_schedule',
    body: { days_of_week: 'ALL', enabled: true, precondition_time: 450, lat: LAT, lon: LON, id: 43 },
    decoded: { params: { id: 43, days_of_week: 'SUN,MON,TUE,WED,THU,FRI,SAT', enabled: true, precondition_time: 450, one_time: false, lat: LAT, lon: LON } },
    after: (s) => expect(s.preconditionSchedules.has(43)).toBe(true),
  },
  {
    name: 'remove_precondition_schedule',
    body: { id: 43 },
    before: (s) => void s.preconditionSchedules.set(43, { id: 43 }),
    decoded: { params: { id: 43 } },
    after: (s) => expect(s.preconditionSchedules.has(43)).toBe(false),
  },
  {
    name: 'set_scheduled_charging',
    body: { enable: true, time: 120 },
    before: (s) => void (s.scheduledCharging = { enabled: false, time: null }),
    decoded: { params: { enable: true, time: 120 } },
    vd: { read: (d) => [cs(d).scheduled_charging_mode, cs(d).scheduled_charging_start_time_minutes], want: ['StartAt', 120] },
  },
  {
    name: 'set_scheduled_departure',
    body: { enable: true, departure_time: 480, preconditioning_enabled: true, off_peak_charging_enabled: true, end_off_peak_time: 360 },
    decoded: { params: { enable: true, departure_time: 480, end_off_peak_time: 360 } },
    after: (s) => expect(s.scheduledDeparture).toMatchObject({ enabled: true, departure_time: 480 }),
  },
  // ---------------------------------------------------------------- vehicle
  { name: 'wake_up' },
  { name: 'flash_lights' },
  { name: 'honk_horn' },
  { name: 'trigger_homelink', body: { lat: LAT, lon: LON }, decoded: { params: { lat: LAT, lon: LON } } },
  {
    name: 'set_low_power_mode',
    body: { enable: true },
    decoded: { params: { enable: true } },
    vd: { read: (d) => vs(d).low_power_mode, want: true },
  },
  {
    name: 'keep_accessory_power_mode',
    body: { enable: true },
    decoded: { params: { enable: true } },
    vd: { read: (d) => vs(d).keep_accessory_power_mode, want: true },
  },
  {
    name: 'set_vehicle_name',
    body: { vehicle_name: 'Truck ✓ "quoted"' },
    before: (s) => void (s.guestMode = false),
    decoded: { params: { vehicle_name: 'Truck ✓ "quoted"' } },
    vd: { read: (d) => vs(d).vehicle_name, want: 'Truck ✓ "quoted"' },
  },
  { name: 'erase_user_data' },
];

let keyFile: { path: string; cleanup(): Promise<void> };
let sim: RunningSim;
let proxy: RunningProxy;

beforeAll(async () => {
  keyFile = await exampleKeyFile();
  const publicKey = loadKeyFile(keyFile.path).publicKey;
  sim = await startSim({ port: 0, fleet: FLEET, enroll: [{ publicKey, role: 'owner' }], timeScale: 1000, limits: false });
  const cfg = parseConfig(['--key', keyFile.path, '--port', '0', '--upstream', sim.url, '--timeout', '15s'], {}) as ProxyConfig;
  proxy = await startProxy(cfg, { sleep: async () => undefined });
});
afterAll(async () => {
  await proxy?.close();
  await sim?.close();
  await keyFile?.cleanup();
});

async function send(name: string, text: string | undefined, vin: string = VIN): Promise<{ status: number; json: any }> {
  const r = await fetch(`${proxy.url}/api/1/vehicles/${vin}/command/${name}`, {
    method: 'POST',
    headers: AUTH,
    ...(text === undefined ? {} : { body: text }),
  });
  return { status: r.status, json: await r.json() };
}

async function vehicleData(query = '', vin: string = VIN): Promise<VD> {
  const r = await fetch(`${proxy.url}/api/1/vehicles/${vin}/vehicle_data${query}`, { headers: AUTH });
  expect(r.status).toBe(200);
  return ((await r.json()) as { response: VD }).response;
}

const lastSeq = (): number => sim.sim.log().at(-1)?.seq ?? 0;
const state = (vin: string = VIN): VehicleState => sim.sim.vehicle(vin).state;
const caseText = (c: Case): string | undefined => c.raw ?? (c.body === undefined ? undefined : JSON.stringify(c.body));
const title = (c: Case): string => (c.label ? `${c.name} — ${c.label}` : c.name);

const exercised = new Set<string>();
const stateChecked = new Set<Area>();
const areaOf = (name: string): Area => COMMANDS.find((d) => d.name === name)!.area;

describe('every catalogue command through vcproxy serve against the simulator', () => {
  it('the example table has one entry for every command and nothing else', () => {
    const names = new Set(CASES.map((c) => c.name));
    expect([...names].sort()).toEqual(COMMANDS.map((c) => c.name));
    expect(names.size).toBe(81);
    // Every example body is valid for the catalogue (so a failure below is a routing bug).
    for (const c of CASES) {
      const text = caseText(c);
      const p = planCommand(c.name, text === undefined ? undefined : JSON.parse(text));
      expect(p.ok, `${title(c)} body is valid`).toBe(true);
    }
  });

  it('the simulator knows every catalogue command over REST, and serves every forwarded one for signing cars', () => {
    // The simulator keeps its own lists (it must not import the catalogue); they must agree.
    for (const d of COMMANDS) {
      if (d.mode === 'wake') continue;
      expect(REST_COMMANDS.has(d.name), `${d.name} is a REST command of the simulator`).toBe(true);
      if (d.mode === 'rest' || d.mode === 'mixed') expect(SERVICE_REST_COMMANDS.has(d.name), `${d.name} is served for signing cars`).toBe(true);
    }
  });

  for (const c of CASES) {
    it(title(c), async () => {
      const text = caseText(c);
      const planned = planCommand(c.name, text === undefined ? undefined : JSON.parse(text));
      if (!planned.ok) throw planned.error;
      const plan = planned.plan;

      if (plan.kind === 'wake') {
        sim.sim.setState(ASLEEP, 'asleep');
        const since = lastSeq();
        const r = await send(c.name, text, ASLEEP);
        expect(r.status).toBe(200);
        expect(r.json).toEqual({ response: { result: true, reason: '' } });
        const wakes = sim.sim.log({ vin: ASLEEP, since }).filter((e) => e.event === 'wake_up');
        expect(wakes.map((e) => e.reason)).toEqual(['waking']);
        // 10–60 s of vehicle time at scale 1000 = 10–60 ms; poll the record through the proxy.
        let st = '';
        for (let i = 0; i < 200 && st !== 'online'; i++) {
          const rec = await fetch(`${proxy.url}/api/1/vehicles/${ASLEEP}`, { headers: AUTH });
          st = ((await rec.json()) as { response: { state: string } }).response.state;
          if (st !== 'online') await new Promise((res) => setTimeout(res, 10));
        }
        expect(st).toBe('online');
        exercised.add(c.name);
        return;
      }

      if (c.before) c.before(state());
      if (c.vd) {
        const before = c.vd.read(await vehicleData(c.vd.query));
        expect(before, 'vehicle_data already shows the wanted value: the case proves nothing').not.toEqual(c.vd.want);
      }
      const since = lastSeq();
      const r = await send(c.name, text);
      expect(r.status).toBe(200);
      expect(r.json).toEqual({ response: { result: true, reason: '' } });
      const entries: SimLogEntry[] = sim.sim.log({ vin: VIN, since });

      if (plan.kind === 'signed') {
        const cmds = entries.filter((e) => e.event === 'command');
        expect(cmds, JSON.stringify(entries)).toHaveLength(1);
        const e = cmds[0]!;
        expect(e.channel).toBe(plan.domain === Domain.VEHICLE_SECURITY ? 'vcsec' : 'infotainment');
        expect(e).toMatchObject({ command: c.decoded?.command ?? c.name, verified: true, executed: true, result: 'ok', role: 'owner' });
        expect(e.unmodelled, 'the simulator decoded a known action').toBeUndefined();
        if (c.decoded?.params) expect(e.params).toMatchObject(c.decoded.params);
        expect(entries.filter((x) => x.event === 'rest_command')).toHaveLength(0);
        // No PIN or password in the log, whatever the command (random hex such as epochs left
        // out: it contains a 4-digit PIN by chance now and then).
        expect(withoutNoise(entries)).not.toMatch(/1234|4321|1111|2222/);
      } else {
        expect(plan.kind).toBe('rest');
        const rest = entries.filter((e) => e.event === 'rest_command');
        expect(rest, JSON.stringify(entries)).toHaveLength(1);
        const e = rest[0]!;
        expect(e).toMatchObject({ command: c.name, channel: 'rest', executed: true, result: 'ok' });
        expect(text, 'forwarded cases send a body').toBeDefined();
        // Byte for byte: the digest of what arrived equals the digest of what we sent.
        expect(e.body_digest).toBe(sim.sim.bodyDigest(text!));
        expect(e.params).toEqual(JSON.parse(text!));
        // Forwarded commands open no session and sign nothing.
        expect(entries.filter((x) => x.event === 'command' || x.event === 'session_info')).toHaveLength(0);
      }

      if (c.vd) {
        expect(c.vd.read(await vehicleData(c.vd.query))).toEqual(c.vd.want);
        stateChecked.add(areaOf(c.name));
      }
      c.after?.(state());
      exercised.add(c.name);
    });
  }

  it('exercised all 81 commands, and read a state change back from vehicle_data in every area', () => {
    expect(exercised.size).toBe(COMMANDS.length);
    expect(COMMANDS.length).toBe(81);
    expect([...stateChecked].sort()).toEqual([...new Set(COMMANDS.map((c) => c.area))].sort());
  });
});
