/**
 * The simulated vehicle's application state and the state machines of the service spec
 * ("States and transitions"): locks, closures, climate, charging, media, PIN to drive,
 * valet, speed limit, parental controls, guest mode, software update.
 *
 * Commands arrive here already decoded and authenticated, in the service's REST vocabulary
 * (`{name, params}`), whether they came from a signed VCSEC/CarServer payload or from the
 * legacy REST endpoint — so both paths share one model and one set of refusal reasons.
 * Role checks that a real vehicle enforces at the protocol layer happen here too and come
 * back as a `fault` outcome (MESSAGEFAULT_ERROR_INSUFFICIENT_PRIVILEGES).
 *
 * Refusal reason strings: the spec names already_set, already_started, not_charging,
 * not_supported, parental_controls_active, complete, disconnected…; where it only describes
 * a refusal in prose, we use a short snake_case reason (listed in src/sim/README.md).
 */
import { CarServer } from '../protocol/pb.js';
import type { Outcome, RoleName, SimCommand, VehicleSpec } from './types.js';

/** Command names of the service's REST `command/{name}` endpoints (spec: Vehicle commands). */
export const REST_COMMANDS: ReadonlySet<string> = new Set([
  'actuate_trunk', 'add_charge_schedule', 'remove_charge_schedule', 'add_precondition_schedule',
  'remove_precondition_schedule', 'adjust_volume', 'auto_conditioning_start', 'auto_conditioning_stop',
  'cancel_software_update', 'charge_max_range', 'charge_port_door_close', 'charge_port_door_open',
  'charge_standard', 'charge_start', 'charge_stop', 'clear_pin_to_drive_admin', 'door_lock', 'door_unlock',
  'erase_user_data', 'flash_lights', 'honk_horn', 'guest_mode', 'media_next_fav', 'media_prev_fav',
  'media_next_track', 'media_prev_track', 'media_toggle_playback', 'media_volume_down', 'media_volume_up',
  'navigation_gps_request', 'navigation_request', 'navigation_sc_request', 'navigation_waypoints_request',
  'parental_controls_activate', 'parental_controls_clear_pin_admin', 'parental_controls_deactivate',
  'parental_controls_enable_setting', 'parental_controls_set_speed_limit', 'remote_auto_seat_climate_request',
  'remote_auto_steering_wheel_heat_climate_request', 'remote_seat_cooler_request', 'remote_seat_heater_request',
  'remote_steering_wheel_heat_level_request', 'remote_steering_wheel_heater_request', 'remote_boombox',
  'remote_start_drive', 'reset_pin_to_drive_pin', 'reset_valet_pin', 'schedule_software_update',
  'set_bioweapon_mode', 'set_cabin_overheat_protection', 'set_charge_limit', 'set_charging_amps',
  'set_climate_keeper_mode', 'set_cop_temp', 'set_pin_to_drive', 'set_preconditioning_max',
  'set_scheduled_charging', 'set_scheduled_departure', 'set_sentry_mode', 'set_temps', 'set_valet_mode',
  'set_vehicle_name', 'speed_limit_activate', 'speed_limit_clear_pin', 'speed_limit_clear_pin_admin',
  'speed_limit_deactivate', 'speed_limit_set_limit', 'sun_roof_control', 'trigger_homelink',
  'upcoming_calendar_entries', 'window_control',
  // Cybertruck tonneau, power modes and the fleet managed-charging endpoints.
  'open_tonneau', 'close_tonneau', 'stop_tonneau', 'set_low_power_mode', 'keep_accessory_power_mode',
  'set_managed_charge_current_request', 'set_managed_charger_location', 'set_managed_scheduled_charging_time',
]);

/**
 * REST commands the service serves for every vehicle, including vehicles that require the
 * signed protocol: the protocol has no vehicle message for them (the service resolves
 * places, calendars and managed-charging settings itself, or the vehicle only takes them
 * from the service), so clients — and the reference proxy — must send them as REST. A car
 * that requires signing answers 403 `vehicle_command_protocol_required` for every other
 * REST command. `sun_roof_control` is here because the reference proxy builds no signed
 * message for it (its "stop" has none) and forwards it; vent/close also work signed.
 */
export const SERVICE_REST_COMMANDS: ReadonlySet<string> = new Set([
  'navigation_request', 'navigation_gps_request', 'navigation_sc_request', 'navigation_waypoints_request',
  'upcoming_calendar_entries', 'remote_boombox', 'remote_steering_wheel_heat_level_request',
  'remote_auto_steering_wheel_heat_climate_request', 'set_managed_charge_current_request',
  'set_managed_charger_location', 'set_managed_scheduled_charging_time', 'sun_roof_control',
]);

/**
 * Commands counted against the spec's "Charging commands: 5 requests per vehicle per day"
 * limit (in addition to the 50 commands). The spec does not list them; we count every
 * command that starts, stops or shapes a charging session or the charge port — the same
 * set a charging-manager key may authorize — plus the fleet managed-charging commands.
 * Vehicle data reads, climate and schedules for preconditioning are not charging commands.
 */
export const CHARGING_LIMITED_COMMANDS: ReadonlySet<string> = new Set([
  'charge_start', 'charge_stop', 'charge_standard', 'charge_max_range', 'set_charge_limit', 'set_charging_amps',
  'charge_port_door_open', 'charge_port_door_close', 'set_scheduled_charging', 'add_charge_schedule',
  'remove_charge_schedule', 'batch_remove_charge_schedules', 'set_managed_charge_current_request',
  'set_managed_charger_location', 'set_managed_scheduled_charging_time',
]);

/** MessageFault_E values the state layer can produce (the wire numbers). */
export const FAULT_INSUFFICIENT_PRIVILEGES = 7;
export const FAULT_INVALID_COMMAND = 9;

export type ChargingState = 'Disconnected' | 'Stopped' | 'Charging' | 'Complete' | 'NoPower';
const CHARGING_STATES: readonly string[] = ['Disconnected', 'Stopped', 'Charging', 'Complete', 'NoPower'];

/** Compare dotted firmware versions numerically: <0, 0, >0. */
export function compareFirmware(a: string, b: string): number {
  const pa = a.split(/[.\s]/).map((x) => Number.parseInt(x, 10) || 0);
  const pb = b.split(/[.\s]/).map((x) => Number.parseInt(x, 10) || 0);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** Release line (year.week) strictly above `base`: "above 2023.38" excludes every 2023.38.x. */
export function releaseAbove(version: string, base: string): boolean {
  const line = version.split('.').slice(0, 2).join('.');
  return compareFirmware(line, base) > 0;
}

const ok = (data?: Record<string, unknown>): Outcome => (data ? { kind: 'ok', data } : { kind: 'ok' });
const refuse = (reason: string): Outcome => ({ kind: 'refused', reason });
const privileges = (why: string): Outcome => ({ kind: 'fault', fault: FAULT_INSUFFICIENT_PRIVILEGES, why });
const unsupportedFirmware = (why: string): Outcome => ({ kind: 'fault', fault: FAULT_INVALID_COMMAND, why });

const FOUR_DIGITS = /^\d{4}$/;
const KEEPER_MODES = ['off', 'on', 'dog', 'camp'] as const;
const COP_TEMPS = ['low', 'medium', 'high'] as const;
/** Setting names as the protocol's enum spells them (vehicle_data reports each one). */
const PARENTAL_SETTINGS: readonly string[] = Object.keys(CarServer.ParentalControlsEnableSettingsAction.ParentalControlsSetting_E);

/** Commands that change access controls or PINs: owners and fleet managers only. */
const OWNER_ONLY = new Set([
  'set_pin_to_drive',
  'reset_pin_to_drive_pin',
  'clear_pin_to_drive_admin',
  'speed_limit_clear_pin_admin',
  'parental_controls_clear_pin_admin',
  'reset_valet_pin',
]);
/** Commands a charging-manager key may authorize (besides reading data). */
const CHARGING_COMMANDS = new Set([
  'charge_start',
  'charge_stop',
  'charge_standard',
  'charge_max_range',
  'set_charge_limit',
  'set_charging_amps',
  'charge_port_door_open',
  'charge_port_door_close',
  'set_scheduled_charging',
  'add_charge_schedule',
  'remove_charge_schedule',
]);
/** Read-only requests any enrolled role may make. */
const READ_ONLY = new Set(['vehicle_data', 'ping', 'nearby_charging_sites', 'information_request']);

export interface SeatState {
  [position: string]: number;
}

export interface VehicleStateOptions {
  now: () => number;
  /** Schedules a callback after `ms` of (already time-scaled) wall time. */
  schedule: (ms: number, fn: () => void) => void;
  timeScale: number;
}

/** Mutable application state of one vehicle. */
export class VehicleState {
  readonly spec: VehicleSpec;
  readonly firmware: string;
  locked: boolean;
  doors = { df: 0, dr: 0, pf: 0, pr: 0 };
  ft = 0;
  rt = 0;
  windows = { fd_window: 0, fp_window: 0, rd_window: 0, rp_window: 0 };
  sunRoofState = 'closed';
  sentry = false;
  remoteStart = false;
  // climate
  climateOn = false;
  driverTemp = 21;
  passengerTemp = 21;
  keeperMode: (typeof KEEPER_MODES)[number] = 'off';
  seatHeaters: SeatState = {
    seat_heater_left: 0,
    seat_heater_right: 0,
    seat_heater_rear_left: 0,
    seat_heater_rear_left_back: 0,
    seat_heater_rear_center: 0,
    seat_heater_rear_right: 0,
    seat_heater_rear_right_back: 0,
    seat_heater_third_row_left: 0,
    seat_heater_third_row_right: 0,
  };
  seatCoolers: SeatState = { seat_fan_front_left: 0, seat_fan_front_right: 0 };
  autoSeatClimate = { left: false, right: false };
  steeringWheelHeater = false;
  bioweapon = false;
  cabinOverheat: 'Off' | 'On' | 'FanOnly' = 'On';
  copTemp: (typeof COP_TEMPS)[number] = 'high';
  preconditioningMax = false;
  // charging
  batteryLevel: number;
  chargeLimit: number;
  readonly chargeLimitStd = 90;
  chargingState: ChargingState;
  chargeAmps: number;
  readonly chargeCurrentMax: number;
  chargePortOpen: boolean;
  scheduledCharging: { enabled: boolean; time: number | null } = { enabled: false, time: null };
  scheduledDeparture: Record<string, unknown> = { enabled: false };
  chargeSchedules = new Map<number, Record<string, unknown>>();
  preconditionSchedules = new Map<number, Record<string, unknown>>();
  // media
  volume = 3.0;
  readonly volumeMax = 11.0;
  mediaPlaying = false;
  userPresent: boolean;
  // identity
  vehicleName: string;
  // software update
  update: { status: '' | 'available' | 'scheduled' | 'installing' | 'installed'; version: string; scheduledAtMs: number | null };
  private updateTimer = 0;
  // access-control state machines
  pinToDrive = { enabled: false, pin: null as string | null };
  valet = { on: false, password: null as string | null };
  speedLimit = { active: false, pin: null as string | null, limitMph: 85 };
  parental = {
    active: false,
    pin: null as string | null,
    settings: Object.fromEntries(PARENTAL_SETTINGS.map((s) => [s, false])) as Record<string, boolean>,
    speedLimitMph: 65,
  };
  guestMode = false;
  /** The one guest with access (spec: Guest access), or null. */
  guestAccess: string | null = null;
  lowPowerMode = false;
  keepAccessoryPower = false;
  /**
   * Where the navigation system is headed (set by the navigation_* commands). Shown in
   * vehicle_data's drive_state as active_route_* only with location (it is location data).
   */
  activeRoute: { destination: string; latitude: number | null; longitude: number | null } | null = null;
  readonly hasHomelink: boolean;
  private readonly opts: VehicleStateOptions;

  constructor(spec: VehicleSpec, opts: VehicleStateOptions) {
    this.spec = spec;
    this.opts = opts;
    this.firmware = spec.firmware ?? '2024.44.25';
    this.locked = spec.locked ?? true;
    this.batteryLevel = spec.battery_level ?? 64;
    this.chargeLimit = spec.charge_limit_soc ?? 80;
    const cs = spec.charging_state ?? 'Stopped';
    this.chargingState = (CHARGING_STATES.includes(cs) ? cs : 'Stopped') as ChargingState;
    this.chargeCurrentMax = spec.charge_current_max ?? 32;
    this.chargeAmps = Math.min(16, this.chargeCurrentMax);
    this.chargePortOpen = this.chargingState !== 'Disconnected';
    this.userPresent = spec.user_present ?? true;
    this.vehicleName = spec.display_name ?? `Sim ${spec.model ?? 'vehicle'}`;
    this.hasHomelink = spec.has_homelink ?? false;
    const avail = spec.update_available === undefined ? '2025.2.6' : spec.update_available;
    this.update = avail
      ? { status: 'available', version: avail, scheduledAtMs: null }
      : { status: '', version: '', scheduledAtMs: null };
  }

  firmwareAtLeast(v: string): boolean {
    return compareFirmware(this.firmware, v) >= 0;
  }

  private cableConnected(): boolean {
    return this.chargingState !== 'Disconnected';
  }

  private climateComfortOn(): boolean {
    return this.climateOn || this.keeperMode !== 'off';
  }

  /**
   * Runs one command for a signer with `role` (undefined = REST path of a legacy vehicle,
   * where the account's OAuth token is the authority and key roles do not apply).
   */
  execute(cmd: SimCommand, role: RoleName | undefined): Outcome {
    const p = cmd.params;
    if (role !== undefined) {
      const denied = this.roleCheck(cmd.name, role);
      if (denied) return denied;
    }
    switch (cmd.name) {
      case 'ping':
      case 'vehicle_data':
      case 'information_request':
        return ok();
      case 'door_lock':
        this.locked = true;
        return ok();
      case 'door_unlock':
        this.locked = false;
        return ok();
      case 'auto_secure_vehicle':
        this.locked = true;
        for (const k of Object.keys(this.windows)) this.windows[k as keyof typeof this.windows] = 0;
        return ok();
      case 'remote_start_drive':
        this.remoteStart = true;
        return ok();
      case 'wake_vehicle':
        return ok();
      case 'actuate_trunk': {
        const which = str(p.which_trunk);
        const move = str(p.move) ?? 'move';
        if (which === 'front') {
          // Frunks open remotely but cannot be closed remotely on most models.
          if (move === 'close') return refuse('not_supported');
          this.ft = 1;
          return ok();
        }
        if (which === 'rear') {
          if (move === 'open') this.rt = 1;
          else if (move === 'close') this.rt = 0;
          else this.rt = this.rt ? 0 : 1;
          return ok();
        }
        return refuse('invalid_trunk');
      }
      case 'open_tonneau':
      case 'close_tonneau':
      case 'stop_tonneau':
        return this.spec.model === 'Cybertruck' ? ok() : refuse('not_supported');
      case 'window_control': {
        const c = str(p.command);
        if (c !== 'vent' && c !== 'close') return refuse('invalid_command');
        const v = c === 'vent' ? 1 : 0;
        for (const k of Object.keys(this.windows)) this.windows[k as keyof typeof this.windows] = v;
        return ok();
      }
      case 'sun_roof_control': {
        const s = str(p.state);
        if (s !== 'vent' && s !== 'close' && s !== 'stop' && s !== 'open') return refuse('invalid_state');
        if (s !== 'stop') this.sunRoofState = s === 'close' ? 'closed' : s;
        return ok();
      }
      case 'set_sentry_mode':
        this.sentry = bool(p.on);
        return ok();
      case 'flash_lights':
      case 'honk_horn':
      case 'remote_boombox': {
        if (cmd.name === 'remote_boombox') {
          const sound = num(p.sound) ?? 2000;
          if (sound !== 0 && sound !== 2000) return refuse('invalid_sound');
        }
        return ok();
      }
      // ---- climate ----
      case 'auto_conditioning_start':
        this.climateOn = true;
        return ok();
      case 'auto_conditioning_stop':
        this.climateOn = false;
        this.keeperMode = 'off';
        return ok();
      case 'set_temps': {
        const d = num(p.driver_temp);
        const q = num(p.passenger_temp);
        if (d !== undefined) this.driverTemp = clamp(d, 15, 28);
        if (q !== undefined) this.passengerTemp = clamp(q, 15, 28);
        return ok();
      }
      case 'set_climate_keeper_mode': {
        const m = num(p.climate_keeper_mode);
        const mode = m === undefined ? undefined : KEEPER_MODES[m];
        if (mode === undefined) return refuse('invalid_value');
        this.keeperMode = mode;
        if (mode !== 'off') this.climateOn = true;
        return ok();
      }
      case 'remote_seat_heater_request': {
        if (!this.climateComfortOn()) return refuse('cabin comfort remote settings not enabled');
        const pos = num(p.seat_position) ?? num(p.heater);
        const level = num(p.seat_heater_level) ?? num(p.level);
        const key = SEAT_HEATER_KEYS[pos ?? -1];
        if (key === undefined || level === undefined || level < 0 || level > 3) return refuse('invalid_value');
        this.seatHeaters[key] = level;
        return ok();
      }
      case 'remote_seat_cooler_request': {
        if (!this.climateComfortOn()) return refuse('cabin comfort remote settings not enabled');
        const pos = num(p.seat_position);
        const level = num(p.seat_cooler_level);
        const key = pos === 1 ? 'seat_fan_front_left' : pos === 2 ? 'seat_fan_front_right' : undefined;
        if (key === undefined || level === undefined || level < 0 || level > 3) return refuse('invalid_value');
        this.seatCoolers[key] = level;
        return ok();
      }
      case 'remote_auto_seat_climate_request': {
        if (!this.climateComfortOn()) return refuse('cabin comfort remote settings not enabled');
        const pos = num(p.auto_seat_position);
        if (pos === 1) this.autoSeatClimate.left = bool(p.auto_climate_on);
        else if (pos === 2) this.autoSeatClimate.right = bool(p.auto_climate_on);
        else return refuse('invalid_value');
        return ok();
      }
      case 'remote_steering_wheel_heater_request':
      case 'remote_steering_wheel_heat_level_request':
      case 'remote_auto_steering_wheel_heat_climate_request':
        if (!this.climateComfortOn()) return refuse('cabin comfort remote settings not enabled');
        this.steeringWheelHeater = p.on === undefined ? (num(p.level) ?? 0) > 0 : bool(p.on);
        return ok();
      case 'set_bioweapon_mode':
        this.bioweapon = bool(p.on);
        return ok();
      case 'set_cabin_overheat_protection':
        this.cabinOverheat = !bool(p.on) ? 'Off' : bool(p.fan_only) ? 'FanOnly' : 'On';
        return ok();
      case 'set_cop_temp': {
        const t = num(p.cop_temp);
        const level = t === undefined ? undefined : COP_TEMPS[t];
        if (level === undefined) return refuse('invalid_value');
        this.copTemp = level;
        return ok();
      }
      case 'set_preconditioning_max':
        this.preconditioningMax = bool(p.on);
        return ok();
      // ---- charging ----
      case 'charge_start':
        switch (this.chargingState) {
          case 'Disconnected':
            return refuse('disconnected');
          case 'Charging':
            return refuse('is_charging');
          case 'Complete':
            return refuse('complete');
          case 'NoPower':
            return refuse('no_power');
          default:
            if (this.batteryLevel >= this.chargeLimit) {
              this.chargingState = 'Complete';
              return refuse('complete');
            }
            this.chargingState = 'Charging';
            return ok();
        }
      case 'charge_stop':
        if (this.chargingState !== 'Charging') return refuse('not_charging');
        this.chargingState = 'Stopped';
        return ok();
      case 'charge_standard':
        if (this.chargeLimit === this.chargeLimitStd) return refuse('already_started');
        this.chargeLimit = this.chargeLimitStd;
        this.afterLimitChange();
        return ok();
      case 'charge_max_range':
        if (this.chargeLimit === 100) return refuse('already_started');
        this.chargeLimit = 100;
        this.afterLimitChange();
        return ok();
      case 'set_charge_limit': {
        const pct = num(p.percent);
        if (pct === undefined) return refuse('invalid_value');
        const v = clamp(Math.round(pct), 50, 100);
        if (v === this.chargeLimit) return refuse('already_set');
        this.chargeLimit = v;
        this.afterLimitChange();
        return ok();
      }
      case 'set_charging_amps': {
        const a = num(p.charging_amps);
        if (a === undefined) return refuse('invalid_value');
        this.chargeAmps = clamp(Math.round(a), 0, this.chargeCurrentMax);
        return ok();
      }
      case 'charge_port_door_open':
        this.chargePortOpen = true;
        return ok();
      case 'charge_port_door_close':
        // Older S and X have no motorised charge port door to close remotely.
        if ((this.spec.model === 'S' || this.spec.model === 'X') && (this.spec.year ?? 2024) < 2021) {
          return refuse('no_electric_charge_port');
        }
        if (this.cableConnected()) return refuse('cable_connected');
        if (!this.chargePortOpen) return refuse('already_closed');
        this.chargePortOpen = false;
        return ok();
      case 'set_scheduled_charging':
        this.scheduledCharging = { enabled: bool(p.enable), time: num(p.time) ?? null };
        return ok();
      case 'set_scheduled_departure':
        this.scheduledDeparture = { ...p, enabled: bool(p.enable) };
        return ok();
      case 'add_charge_schedule': {
        const id = num(p.id) ?? this.opts.now();
        this.chargeSchedules.set(id, { ...p, id });
        return ok();
      }
      case 'remove_charge_schedule':
        this.chargeSchedules.delete(num(p.id) ?? -1);
        return ok();
      case 'add_precondition_schedule': {
        const id = num(p.id) ?? this.opts.now();
        this.preconditionSchedules.set(id, { ...p, id });
        return ok();
      }
      case 'remove_precondition_schedule':
        this.preconditionSchedules.delete(num(p.id) ?? -1);
        return ok();
      case 'batch_remove_charge_schedules':
        this.chargeSchedules.clear();
        return ok();
      case 'batch_remove_precondition_schedules':
        this.preconditionSchedules.clear();
        return ok();
      // ---- media ----
      case 'adjust_volume': {
        if (!this.userPresent) return refuse('user_not_present');
        const v = num(p.volume);
        if (v === undefined || v < 0 || v > this.volumeMax) return refuse('invalid_value');
        this.volume = v;
        return ok();
      }
      case 'media_volume_up':
      case 'media_volume_down': {
        if (!this.userPresent) return refuse('user_not_present');
        const step = num(p.volume_delta) ?? (cmd.name === 'media_volume_up' ? 1 : -1);
        // One notch is a third of a volume unit on the 0–11 scale.
        this.volume = clamp(Math.round((this.volume + step / 3) * 1000) / 1000, 0, this.volumeMax);
        return ok();
      }
      case 'media_toggle_playback':
        this.mediaPlaying = !this.mediaPlaying;
        return ok();
      case 'media_next_track':
      case 'media_prev_track':
      case 'media_next_fav':
      case 'media_prev_fav':
        return ok();
      // ---- identity / misc ----
      case 'set_vehicle_name': {
        if (this.guestMode) return refuse('not_supported');
        const name = str(p.vehicle_name);
        if (!name) return refuse('invalid_value');
        this.vehicleName = name;
        return ok();
      }
      case 'trigger_homelink':
        return this.hasHomelink ? ok() : refuse('not_supported');
      case 'navigation_request': {
        const v = p.value;
        const text = v && typeof v === 'object' ? str((v as Record<string, unknown>)['android.intent.extra.TEXT']) : undefined;
        if (!text) return refuse('invalid_value');
        this.activeRoute = { destination: text, latitude: null, longitude: null };
        return ok();
      }
      case 'navigation_gps_request': {
        const lat = num(p.lat);
        const lon = num(p.lon);
        if (lat === undefined || lon === undefined || Math.abs(lat) > 90 || Math.abs(lon) > 180) return refuse('invalid_value');
        this.activeRoute = { destination: `${lat},${lon}`, latitude: lat, longitude: lon };
        return ok();
      }
      case 'navigation_sc_request': {
        const id = num(p.id);
        if (id === undefined) return refuse('invalid_value');
        this.activeRoute = { destination: `Supercharger ${id}`, latitude: null, longitude: null };
        return ok();
      }
      case 'erase_user_data':
      case 'navigation_waypoints_request':
      case 'upcoming_calendar_entries':
        return ok();
      case 'set_low_power_mode':
        this.lowPowerMode = bool(p.enable);
        return ok();
      case 'keep_accessory_power_mode':
        this.keepAccessoryPower = bool(p.enable);
        return ok();
      case 'guest_mode':
        if (!this.firmwareAtLeast('2024.14')) return unsupportedFirmware('guest mode needs firmware 2024.14 or later');
        this.guestMode = bool(p.enable);
        if (!this.guestMode) this.guestAccess = null; // guest mode disabled → guest removed
        return ok();
      // ---- software update ----
      case 'schedule_software_update': {
        if (this.update.status === 'installing') return refuse('installing');
        if (this.update.status !== 'available' && this.update.status !== 'scheduled') return refuse('no_update_available');
        const offset = Math.max(0, num(p.offset_sec) ?? 0);
        this.update.status = 'scheduled';
        this.update.scheduledAtMs = this.opts.now() + offset * 1000;
        const token = ++this.updateTimer;
        this.opts.schedule((offset * 1000) / this.opts.timeScale, () => {
          if (token === this.updateTimer && this.update.status === 'scheduled') this.update.status = 'installing';
        });
        return ok();
      }
      case 'cancel_software_update':
        if (this.update.status === 'installing') return refuse('installing');
        if (this.update.status === 'scheduled') {
          this.update.status = 'available';
          this.update.scheduledAtMs = null;
          this.updateTimer++;
        }
        return ok();
      // ---- PIN to drive ----
      case 'set_pin_to_drive': {
        const on = bool(p.on);
        if (!on) {
          this.pinToDrive.enabled = false; // the PIN is remembered
          return ok();
        }
        if (this.valet.on) return refuse('valet_mode_active');
        if (this.pinToDrive.pin === null) {
          const pw = str(p.password);
          if (pw === undefined || !FOUR_DIGITS.test(pw)) return refuse('invalid_pin');
          this.pinToDrive.pin = pw;
        }
        // Once a PIN is stored, a new PIN in the request is discarded (spec: States).
        this.pinToDrive.enabled = true;
        return ok();
      }
      case 'reset_pin_to_drive_pin':
        if (this.valet.on) return refuse('valet_mode_active');
        if (!this.pinToDrive.enabled) return refuse('pin_to_drive_not_enabled');
        this.pinToDrive.pin = null;
        this.pinToDrive.enabled = false;
        return ok();
      case 'clear_pin_to_drive_admin':
        if (!releaseAbove(this.firmware, '2023.44')) return unsupportedFirmware('needs firmware above 2023.44');
        this.pinToDrive = { enabled: false, pin: null };
        return ok();
      // ---- valet ----
      case 'set_valet_mode': {
        const on = bool(p.on);
        const pw = str(p.password);
        if (on) {
          if (this.valet.on) return ok();
          if (this.valet.password === null) {
            if (pw === undefined || !FOUR_DIGITS.test(pw)) return refuse('invalid_password');
            this.valet.password = pw;
          } else if (pw !== undefined && pw !== '' && pw !== this.valet.password) {
            return refuse('invalid_password');
          }
          this.valet.on = true;
          return ok();
        }
        if (!this.valet.on) return ok();
        if (pw !== this.valet.password) return refuse('invalid_password');
        this.valet.on = false;
        return ok();
      }
      case 'reset_valet_pin':
        if (this.valet.on) return refuse('valet_mode_active');
        this.valet.password = null;
        return ok();
      // ---- speed limit mode ----
      case 'speed_limit_activate': {
        const pin = str(p.pin);
        if (pin === undefined || !FOUR_DIGITS.test(pin)) return refuse('invalid_pin');
        if (this.speedLimit.pin !== null && this.speedLimit.pin !== pin) return refuse('invalid_pin');
        this.speedLimit.pin = pin;
        this.speedLimit.active = true;
        return ok();
      }
      case 'speed_limit_deactivate': {
        if (!this.speedLimit.active) return ok();
        if (str(p.pin) !== this.speedLimit.pin) return refuse('invalid_pin');
        this.speedLimit.active = false;
        return ok();
      }
      case 'speed_limit_clear_pin': {
        if (this.speedLimit.pin === null) return ok();
        if (str(p.pin) !== this.speedLimit.pin) return refuse('invalid_pin');
        this.speedLimit.active = false;
        this.speedLimit.pin = null;
        return ok();
      }
      case 'speed_limit_clear_pin_admin':
        if (!releaseAbove(this.firmware, '2023.38')) return unsupportedFirmware('needs firmware above 2023.38');
        this.speedLimit.active = false;
        this.speedLimit.pin = null;
        return ok();
      case 'speed_limit_set_limit': {
        const mph = num(p.limit_mph);
        if (mph === undefined || mph < 50 || mph > 120) return refuse('invalid_value');
        if (this.speedLimit.active) return refuse('speed_limit_active');
        this.speedLimit.limitMph = mph;
        return ok();
      }
      // ---- parental controls ----
      case 'parental_controls_activate': {
        const pin = str(p.pin);
        if (pin === undefined || !FOUR_DIGITS.test(pin)) return refuse('invalid_pin');
        // A PIN set earlier must be reused until cleared with parental_controls_clear_pin_admin.
        if (this.parental.pin !== null && this.parental.pin !== pin) return refuse('invalid_pin');
        this.parental.pin = pin;
        this.parental.active = true;
        return ok();
      }
      case 'parental_controls_deactivate': {
        if (!this.parental.active) return ok();
        if (str(p.pin) !== this.parental.pin) return refuse('invalid_pin');
        this.parental.active = false;
        return ok();
      }
      case 'parental_controls_clear_pin': {
        if (this.parental.pin === null) return ok();
        if (str(p.pin) !== this.parental.pin) return refuse('invalid_pin');
        this.parental.pin = null;
        this.parental.active = false;
        return ok();
      }
      case 'parental_controls_clear_pin_admin':
        this.parental.pin = null;
        this.parental.active = false;
        return ok();
      case 'parental_controls_enable_setting': {
        if (this.parental.active) return refuse('parental_controls_active');
        const s = str(p.setting);
        if (s === undefined || !PARENTAL_SETTINGS.includes(s)) return refuse('invalid_setting');
        this.parental.settings[s] = bool(p.enable);
        return ok();
      }
      case 'parental_controls_set_speed_limit': {
        if (this.parental.active) return refuse('parental_controls_active');
        if (!this.parental.settings.SpeedLimit) return refuse('speed_limit_setting_disabled');
        const mph = num(p.limit_mph);
        if (mph === undefined || mph <= 0) return refuse('invalid_value');
        this.parental.speedLimitMph = mph;
        return ok();
      }
      default:
        // A command the model does not track: a real vehicle would execute it; we log it.
        return ok({ unmodelled: true });
    }
  }

  /** A guest scans the (single-use) QR code: only one guest at a time, so it replaces any other. */
  guestScanQr(guestId: string): boolean {
    if (!this.guestMode) return false;
    this.guestAccess = guestId;
    return true;
  }

  /** Someone drives with a key card, or the drivers-remove endpoint is called: the guest is removed. */
  removeGuest(): void {
    this.guestAccess = null;
  }

  private afterLimitChange(): void {
    if (this.chargingState === 'Complete' && this.batteryLevel < this.chargeLimit) this.chargingState = 'Stopped';
    if (this.chargingState === 'Charging' && this.batteryLevel >= this.chargeLimit) this.chargingState = 'Complete';
  }

  private roleCheck(name: string, role: RoleName): Outcome | undefined {
    if (READ_ONLY.has(name)) return undefined;
    switch (role) {
      case 'owner':
        return undefined;
      case 'fleet_manager':
        return undefined;
      case 'driver':
      case 'guest':
        return OWNER_ONLY.has(name) ? privileges(`${role} keys cannot change access controls or PINs`) : undefined;
      case 'charging_manager':
        return CHARGING_COMMANDS.has(name) ? undefined : privileges('charging-manager keys authorize charging commands only');
      case 'vehicle_monitor':
        return privileges('vehicle-monitor keys cannot authorize commands');
      case 'service':
        return name === 'door_lock' || name === 'door_unlock' ? undefined : privileges('remote service commands are disabled');
      default:
        return privileges('key has no role');
    }
  }

  /** The `vehicle_data` body (without location when `withLocation` is false). */
  vehicleData(base: Record<string, unknown>, withLocation: boolean, nowMs: number): Record<string, unknown> {
    const driveState: Record<string, unknown> = {
      gps_as_of: Math.floor(nowMs / 1000),
      shift_state: null,
      speed: null,
      power: 0,
      timestamp: nowMs,
    };
    if (withLocation) {
      driveState.latitude = this.spec.latitude ?? 37.4925;
      driveState.longitude = this.spec.longitude ?? -121.9447;
      driveState.heading = 90;
      driveState.native_latitude = driveState.latitude;
      driveState.native_longitude = driveState.longitude;
      driveState.native_location_supported = 1;
      if (this.activeRoute) {
        driveState.active_route_destination = this.activeRoute.destination;
        driveState.active_route_latitude = this.activeRoute.latitude;
        driveState.active_route_longitude = this.activeRoute.longitude;
      }
    }
    return {
      ...base,
      charge_state: {
        battery_level: this.batteryLevel,
        charge_limit_soc: this.chargeLimit,
        charge_limit_soc_std: this.chargeLimitStd,
        charge_limit_soc_min: 50,
        charge_limit_soc_max: 100,
        charging_state: this.chargingState,
        charge_amps: this.chargeAmps,
        charge_current_request: this.chargeAmps,
        charge_current_request_max: this.chargeCurrentMax,
        charge_port_door_open: this.chargePortOpen,
        charge_port_latch: this.cableConnected() ? 'Engaged' : 'Disengaged',
        conn_charge_cable: this.cableConnected() ? 'IEC' : '<invalid>',
        scheduled_charging_mode: this.scheduledCharging.enabled ? 'StartAt' : 'Off',
        scheduled_charging_start_time_minutes: this.scheduledCharging.time,
        timestamp: nowMs,
      },
      climate_state: {
        is_climate_on: this.climateOn,
        is_auto_conditioning_on: this.climateOn,
        driver_temp_setting: this.driverTemp,
        passenger_temp_setting: this.passengerTemp,
        climate_keeper_mode: this.keeperMode,
        ...this.seatHeaters,
        ...this.seatCoolers,
        auto_seat_climate_left: this.autoSeatClimate.left,
        auto_seat_climate_right: this.autoSeatClimate.right,
        steering_wheel_heater: this.steeringWheelHeater,
        bioweapon_mode: this.bioweapon,
        cabin_overheat_protection: this.cabinOverheat,
        cop_activation_temperature: this.copTemp === 'low' ? 'Low' : this.copTemp === 'medium' ? 'Medium' : 'High',
        is_preconditioning: this.preconditioningMax,
        defrost_mode: this.preconditioningMax ? 2 : 0,
        timestamp: nowMs,
      },
      drive_state: driveState,
      gui_settings: { gui_distance_units: 'mi/hr', gui_temperature_units: 'C', timestamp: nowMs },
      vehicle_config: {
        car_type: carType(this.spec.model),
        has_seat_cooling: true,
        can_actuate_trunks: true,
        timestamp: nowMs,
      },
      vehicle_state: {
        api_version: 79,
        car_version: this.firmware,
        locked: this.locked,
        ...this.doors,
        ft: this.ft,
        rt: this.rt,
        ...this.windows,
        sun_roof_state: this.sunRoofState,
        sentry_mode: this.sentry,
        sentry_mode_available: true,
        remote_start: this.remoteStart,
        is_user_present: this.userPresent,
        vehicle_name: this.vehicleName,
        valet_mode: this.valet.on,
        valet_pin_needed: this.valet.password !== null,
        homelink_nearby: this.hasHomelink,
        media_info: {
          audio_volume: this.volume,
          audio_volume_increment: 0.333333,
          audio_volume_max: this.volumeMax,
          media_playback_status: this.mediaPlaying ? 'Playing' : 'Stopped',
        },
        media_state: { remote_control_enabled: true },
        software_update: {
          status: this.update.status,
          version: this.update.version,
          scheduled_time_ms: this.update.scheduledAtMs,
          expected_duration_sec: 2700,
          warning_time_remaining_ms: 0,
          download_perc: this.update.status ? 100 : 0,
          install_perc: this.update.status === 'installing' ? 1 : 0,
        },
        speed_limit_mode: {
          active: this.speedLimit.active,
          pin_code_set: this.speedLimit.pin !== null,
          current_limit_mph: this.speedLimit.limitMph,
          max_limit_mph: 120,
          min_limit_mph: 50,
        },
        pin_to_drive_enabled: this.pinToDrive.enabled,
        pin_to_drive_pin_set: this.pinToDrive.pin !== null,
        parental_controls: {
          active: this.parental.active,
          pin_set: this.parental.pin !== null,
          settings: { ...this.parental.settings },
          speed_limit_mph: this.parental.speedLimitMph,
        },
        guest_mode_enabled: this.guestMode,
        guest_access: this.guestAccess === null ? null : { id: this.guestAccess },
        low_power_mode: this.lowPowerMode,
        keep_accessory_power_mode: this.keepAccessoryPower,
        timestamp: nowMs,
      },
    };
  }
}

/** The service's seat_position numbers (0..8, as the protocol's seat oneof) → vehicle_data keys. */
const SEAT_HEATER_KEYS: Record<number, string> = {
  0: 'seat_heater_left',
  1: 'seat_heater_right',
  2: 'seat_heater_rear_left',
  3: 'seat_heater_rear_left_back',
  4: 'seat_heater_rear_center',
  5: 'seat_heater_rear_right',
  6: 'seat_heater_rear_right_back',
  7: 'seat_heater_third_row_left',
  8: 'seat_heater_third_row_right',
};

function carType(model: string | undefined): string {
  switch (model) {
    case 'S':
      return 'models2';
    case 'X':
      return 'modelx';
    case '3':
      return 'model3';
    case 'Y':
      return 'modely';
    case 'Cybertruck':
      return 'cybertruck';
    default:
      return 'model3';
  }
}

function str(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return String(v);
  return undefined;
}
function num(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return undefined;
}
function bool(v: unknown): boolean {
  return v === true || v === 'true' || v === 1;
}
function clamp(v: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, v));
}
