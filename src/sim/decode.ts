/**
 * Decodes authenticated application payloads into the sim's command vocabulary
 * (`{name, params}` with the service's REST names), independently of src/commands —
 * the simulator must not share the proxy's command catalogue, or a catalogue bug would
 * pass its own test.
 *
 * VCSEC: `VCSEC.UnsignedMessage` (RKE actions, closure moves, whitelist operations,
 * information requests). Infotainment: `CarServer.Action.vehicleAction`.
 * Returns `undefined` when the payload decodes but carries no action we recognise
 * (the vehicle answers MESSAGEFAULT_ERROR_INVALID_COMMAND); throws on undecodable bytes
 * (MESSAGEFAULT_ERROR_DECODING).
 */
import { CarServer, VCSEC } from '../protocol/pb.js';
import type { SimCommand } from './types.js';

/** A VCSEC payload: either a state command or a key-management (whitelist) operation. */
export type VcsecRequest =
  | { kind: 'command'; cmd: SimCommand }
  | { kind: 'whitelist'; op: string; publicKey: Uint8Array | undefined; role: number | undefined }
  | { kind: 'info'; type: number; publicKey: Uint8Array | undefined }
  | { kind: 'unknown' };

const RKE: Record<number, string> = {
  0: 'door_unlock',
  1: 'door_lock',
  20: 'remote_start_drive',
  29: 'auto_secure_vehicle',
  30: 'wake_vehicle',
};

const MOVE: Record<number, string> = { 1: 'move', 2: 'stop', 3: 'open', 4: 'close' };

export function decodeVcsec(bytes: Uint8Array): VcsecRequest {
  const m = VCSEC.UnsignedMessage.decode(bytes) as VCSEC.UnsignedMessage & { subMessage?: string };
  switch (m.subMessage) {
    case 'RKEAction': {
      const name = RKE[Number(m.RKEAction)];
      return name ? { kind: 'command', cmd: { name, params: {} } } : { kind: 'unknown' };
    }
    case 'closureMoveRequest': {
      const c = m.closureMoveRequest ?? {};
      const rear = Number(c.rearTrunk ?? 0);
      const front = Number(c.frontTrunk ?? 0);
      const tonneau = Number(c.tonneau ?? 0);
      const port = Number(c.chargePort ?? 0);
      if (rear) return { kind: 'command', cmd: { name: 'actuate_trunk', params: { which_trunk: 'rear', move: MOVE[rear] } } };
      if (front) return { kind: 'command', cmd: { name: 'actuate_trunk', params: { which_trunk: 'front', move: MOVE[front] } } };
      if (tonneau) {
        const name = tonneau === 3 ? 'open_tonneau' : tonneau === 4 ? 'close_tonneau' : 'stop_tonneau';
        return { kind: 'command', cmd: { name, params: {} } };
      }
      if (port) {
        const name = port === 4 ? 'charge_port_door_close' : 'charge_port_door_open';
        return { kind: 'command', cmd: { name, params: {} } };
      }
      return { kind: 'unknown' };
    }
    case 'WhitelistOperation': {
      const w = (m.WhitelistOperation ?? {}) as VCSEC.WhitelistOperation & { subMessage?: string };
      const op = w.subMessage;
      if (!op) return { kind: 'unknown' };
      const body = (w as unknown as Record<string, unknown>)[op];
      let publicKey: Uint8Array | undefined;
      let role: number | undefined;
      if (body && typeof body === 'object') {
        const b = body as { PublicKeyRaw?: Uint8Array; key?: { PublicKeyRaw?: Uint8Array }; keyRole?: number; keyToAdd?: { PublicKeyRaw?: Uint8Array } };
        publicKey = b.PublicKeyRaw ?? b.key?.PublicKeyRaw ?? b.keyToAdd?.PublicKeyRaw;
        role = b.keyRole === undefined ? undefined : Number(b.keyRole);
      }
      return { kind: 'whitelist', op, publicKey, role };
    }
    case 'InformationRequest': {
      const r = m.InformationRequest ?? {};
      const pk = (r as { publicKey?: Uint8Array }).publicKey;
      return { kind: 'info', type: Number(r.informationRequestType ?? 0), publicKey: pk ?? undefined };
    }
    default:
      return { kind: 'unknown' };
  }
}

const SEAT_LEVEL: Record<string, number> = {
  SEAT_HEATER_OFF: 0,
  SEAT_HEATER_LOW: 1,
  SEAT_HEATER_MED: 2,
  SEAT_HEATER_HIGH: 3,
};
const SEAT_POS: Record<string, number> = {
  CAR_SEAT_FRONT_LEFT: 0,
  CAR_SEAT_FRONT_RIGHT: 1,
  CAR_SEAT_REAR_LEFT: 2,
  CAR_SEAT_REAR_LEFT_BACK: 3,
  CAR_SEAT_REAR_CENTER: 4,
  CAR_SEAT_REAR_RIGHT: 5,
  CAR_SEAT_REAR_RIGHT_BACK: 6,
  CAR_SEAT_THIRD_ROW_LEFT: 7,
  CAR_SEAT_THIRD_ROW_RIGHT: 8,
};
/** Setting id → name, from the protocol's enum (an unknown id stays undefined and is refused). */
const SETTING = CarServer.ParentalControlsEnableSettingsAction.ParentalControlsSetting_E;
const PARENTAL_SETTING_NAME = new Map<number, string>(
  (Object.keys(SETTING) as (keyof typeof SETTING)[]).map((name) => [SETTING[name], name]),
);

const DAY_NAMES = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];

/** days_of_week bit mask (bit 0 = Sunday) → the REST form, e.g. "MON,TUE". */
export function dayNames(mask: number): string {
  return DAY_NAMES.filter((_, i) => (mask >> i) & 1).join(',');
}

type AnyRec = Record<string, unknown>;
const rec = (v: unknown): AnyRec => (v && typeof v === 'object' ? (v as AnyRec) : {});

/** Decodes a `CarServer.Action`. `undefined` = no recognised action (INVALID_COMMAND). */
export function decodeCarServer(bytes: Uint8Array): SimCommand | undefined {
  const action = CarServer.Action.decode(bytes) as unknown as AnyRec;
  const va = rec(action.vehicleAction);
  const which = va.vehicleActionMsg as string | undefined;
  if (!which) return undefined;
  const a = rec(va[which]);
  const c = (name: string, params: AnyRec = {}): SimCommand => ({ name, params });
  switch (which) {
    case 'getVehicleData':
      return c('vehicle_data');
    case 'ping':
      return c('ping', { ping_id: a.pingId });
    case 'chargingSetLimitAction':
      return c('set_charge_limit', { percent: a.percent });
    case 'chargingStartStopAction': {
      const k = a.chargingAction as string | undefined;
      if (k === 'start') return c('charge_start');
      if (k === 'stop') return c('charge_stop');
      if (k === 'startStandard') return c('charge_standard');
      if (k === 'startMaxRange') return c('charge_max_range');
      return undefined;
    }
    case 'drivingClearSpeedLimitPinAction':
      return c('speed_limit_clear_pin', { pin: a.pin });
    case 'drivingClearSpeedLimitPinAdminAction':
      return c('speed_limit_clear_pin_admin');
    case 'drivingSetSpeedLimitAction':
      return c('speed_limit_set_limit', { limit_mph: a.limitMph });
    case 'drivingSpeedLimitAction':
      return c(a.activate ? 'speed_limit_activate' : 'speed_limit_deactivate', { pin: a.pin });
    case 'hvacAutoAction':
      return c(a.powerOn ? 'auto_conditioning_start' : 'auto_conditioning_stop', { manual_override: a.manualOverride });
    case 'hvacSetPreconditioningMaxAction':
      return c('set_preconditioning_max', { on: a.on, manual_override: a.manualOverride });
    case 'hvacSteeringWheelHeaterAction':
      return c('remote_steering_wheel_heater_request', { on: a.powerOn });
    case 'hvacTemperatureAdjustmentAction':
      return c('set_temps', { driver_temp: a.driverTempCelsius, passenger_temp: a.passengerTempCelsius });
    case 'mediaPlayAction':
      return c('media_toggle_playback');
    case 'mediaUpdateVolume': {
      if (a.mediaVolume === 'volumeDelta') {
        const d = Number(a.volumeDelta);
        return c(d >= 0 ? 'media_volume_up' : 'media_volume_down', { volume_delta: d });
      }
      if (a.mediaVolume === 'volumeAbsoluteFloat') return c('adjust_volume', { volume: a.volumeAbsoluteFloat });
      return undefined;
    }
    case 'mediaNextFavorite':
      return c('media_next_fav');
    case 'mediaPreviousFavorite':
      return c('media_prev_fav');
    case 'mediaNextTrack':
      return c('media_next_track');
    case 'mediaPreviousTrack':
      return c('media_prev_track');
    case 'getNearbyChargingSites':
      return c('nearby_charging_sites');
    case 'vehicleControlCancelSoftwareUpdateAction':
      return c('cancel_software_update');
    case 'vehicleControlFlashLightsAction':
      return c('flash_lights');
    case 'vehicleControlHonkHornAction':
      return c('honk_horn');
    case 'vehicleControlResetValetPinAction':
      return c('reset_valet_pin');
    case 'vehicleControlScheduleSoftwareUpdateAction':
      return c('schedule_software_update', { offset_sec: a.offsetSec });
    case 'vehicleControlSetSentryModeAction':
      return c('set_sentry_mode', { on: a.on });
    case 'vehicleControlSetValetModeAction':
      return c('set_valet_mode', { on: a.on, password: a.password });
    case 'vehicleControlSunroofOpenCloseAction': {
      const act = a.action as string | undefined;
      return c('sun_roof_control', { state: act ?? 'stop' });
    }
    case 'vehicleControlTriggerHomelinkAction': {
      const loc = rec(a.location);
      return c('trigger_homelink', { lat: loc.latitude, lon: loc.longitude, token: a.token });
    }
    case 'vehicleControlWindowAction': {
      const act = a.action as string | undefined;
      if (act !== 'vent' && act !== 'close') return undefined;
      return c('window_control', { command: act });
    }
    case 'hvacBioweaponModeAction':
      return c('set_bioweapon_mode', { on: a.on, manual_override: a.manualOverride });
    case 'hvacSeatHeaterActions': {
      const list = Array.isArray(a.hvacSeatHeaterAction) ? (a.hvacSeatHeaterAction as AnyRec[]) : [];
      const first = list[0];
      if (!first) return undefined;
      const level = SEAT_LEVEL[String(first.seatHeaterLevel)];
      const pos = SEAT_POS[String(first.seatPosition)];
      return c('remote_seat_heater_request', { seat_position: pos, seat_heater_level: level });
    }
    case 'hvacSeatCoolerActions': {
      const list = Array.isArray(a.hvacSeatCoolerAction) ? (a.hvacSeatCoolerAction as AnyRec[]) : [];
      const first = list[0];
      if (!first) return undefined;
      // Wire levels: 1 off … 4 high; REST levels 0 … 3.
      return c('remote_seat_cooler_request', {
        seat_position: Number(first.seatPosition),
        seat_cooler_level: Number(first.seatCoolerLevel) - 1,
      });
    }
    case 'autoSeatClimateAction': {
      const list = Array.isArray(a.carseat) ? (a.carseat as AnyRec[]) : [];
      const first = list[0];
      if (!first) return undefined;
      return c('remote_auto_seat_climate_request', { auto_seat_position: Number(first.seatPosition), auto_climate_on: first.on });
    }
    case 'scheduledChargingAction':
      return c('set_scheduled_charging', { enable: a.enabled, time: a.chargingTime });
    case 'scheduledDepartureAction':
      return c('set_scheduled_departure', { enable: a.enabled, departure_time: a.departureTime, end_off_peak_time: a.offPeakHoursEndTime });
    case 'setChargingAmpsAction':
      return c('set_charging_amps', { charging_amps: a.chargingAmps });
    case 'hvacClimateKeeperAction':
      return c('set_climate_keeper_mode', { climate_keeper_mode: Number(a.ClimateKeeperAction ?? 0), manual_override: a.manualOverride });
    case 'setCabinOverheatProtectionAction':
      return c('set_cabin_overheat_protection', { on: a.on, fan_only: a.fanOnly });
    case 'setVehicleNameAction':
      return c('set_vehicle_name', { vehicle_name: a.vehicleName });
    case 'chargePortDoorClose':
      return c('charge_port_door_close');
    case 'chargePortDoorOpen':
      return c('charge_port_door_open');
    case 'guestModeAction':
      return c('guest_mode', { enable: a.GuestModeActive });
    case 'setCopTempAction': {
      // Wire: 1 low, 2 medium, 3 high; REST cop_temp: 0, 1, 2.
      const t = Number(a.copActivationTemp ?? 0);
      return c('set_cop_temp', { cop_temp: t - 1 });
    }
    case 'eraseUserDataAction':
      return c('erase_user_data', { reason: a.reason });
    case 'vehicleControlSetPinToDriveAction':
      return c('set_pin_to_drive', { on: a.on, password: a.password });
    case 'vehicleControlResetPinToDriveAction':
      return c('reset_pin_to_drive_pin');
    case 'vehicleControlResetPinToDriveAdminAction':
      return c('clear_pin_to_drive_admin');
    // Schedules: every field in the REST vocabulary, defaults included (proto3 leaves false
    // and 0 off the wire, so spreading the decoded message would drop them).
    case 'addChargeScheduleAction':
      return c('add_charge_schedule', {
        id: Number(a.id ?? 0),
        name: a.name ?? '',
        days_of_week: dayNames(Number(a.daysOfWeek ?? 0)),
        enabled: Boolean(a.enabled),
        start_enabled: Boolean(a.startEnabled),
        start_time: Number(a.startTime ?? 0),
        end_enabled: Boolean(a.endEnabled),
        end_time: Number(a.endTime ?? 0),
        one_time: Boolean(a.oneTime),
        lat: Number(a.latitude ?? 0),
        lon: Number(a.longitude ?? 0),
      });
    case 'removeChargeScheduleAction':
      return c('remove_charge_schedule', { id: a.id });
    case 'addPreconditionScheduleAction':
      return c('add_precondition_schedule', {
        id: Number(a.id ?? 0),
        name: a.name ?? '',
        days_of_week: dayNames(Number(a.daysOfWeek ?? 0)),
        enabled: Boolean(a.enabled),
        precondition_time: Number(a.preconditionTime ?? 0),
        one_time: Boolean(a.oneTime),
        lat: Number(a.latitude ?? 0),
        lon: Number(a.longitude ?? 0),
      });
    case 'removePreconditionScheduleAction':
      return c('remove_precondition_schedule', { id: a.id });
    case 'batchRemovePreconditionSchedulesAction':
      return c('batch_remove_precondition_schedules', { home: Boolean(a.home), work: Boolean(a.work), other: Boolean(a.other) });
    case 'batchRemoveChargeSchedulesAction':
      return c('batch_remove_charge_schedules', { home: Boolean(a.home), work: Boolean(a.work), other: Boolean(a.other) });
    case 'parentalControlsClearPinAction':
      return c('parental_controls_clear_pin', { pin: a.pin });
    case 'parentalControlsClearPinAdminAction':
      return c('parental_controls_clear_pin_admin');
    case 'parentalControlsAction':
      return c(a.activate ? 'parental_controls_activate' : 'parental_controls_deactivate', { pin: a.pin });
    case 'parentalControlsEnableSettingsAction':
      return c('parental_controls_enable_setting', { setting: PARENTAL_SETTING_NAME.get(Number(a.setting ?? 0)), enable: a.enable });
    case 'parentalControlsSetSpeedLimitAction':
      return c('parental_controls_set_speed_limit', { limit_mph: a.limitMph });
    case 'setLowPowerModeAction':
      return c('set_low_power_mode', { enable: a.lowPowerMode });
    case 'setKeepAccessoryPowerModeAction':
      return c('keep_accessory_power_mode', { enable: a.keepAccessoryPowerMode });
    default:
      // Decoded but not modelled: it is a real action, so it succeeds and gets logged.
      return c(`carserver:${which}`, {});
  }
}
