/**
 * Golden tests: JSON body → decoded protobuf payload and domain, for every signed command.
 * Expected objects are written by hand from the protocol's facts (car_server.proto,
 * vcsec.proto, the reference's builders in pkg/vehicle/*.go and the service's documented
 * parameter meanings), never produced by the builders under test. Decoding uses
 * toObject({defaults: true}) so an expectation is wire-semantic: a field left unset and a
 * field explicitly set to its default look the same, as on the vehicle.
 */
import { describe, expect, it } from 'vitest';
import { COMMANDS, planCommand } from '../../../src/commands/index.js';
import type { Plan } from '../../../src/commands/index.js';
import { CarServer, VCSEC } from '../../../src/protocol/pb.js';

const VCSEC_DOMAIN = 2; // UniversalMessage.Domain.DOMAIN_VEHICLE_SECURITY
const INFOTAINMENT = 3; // UniversalMessage.Domain.DOMAIN_INFOTAINMENT
const NOW_MS = 1_700_000_000_789; // injected clock for schedule ids → 1700000000 s
const ctx = { now: () => NOW_MS };

const OPTS = { enums: String, longs: Number, defaults: true, arrays: true } as const;

function decode(plan: Plan): { domain: number; message: unknown } {
  if (plan.kind !== 'signed') throw new Error(`expected a signed plan, got ${plan.kind}`);
  if (plan.domain === VCSEC_DOMAIN) {
    return { domain: plan.domain, message: VCSEC.UnsignedMessage.toObject(VCSEC.UnsignedMessage.decode(plan.payload), OPTS) };
  }
  return { domain: plan.domain, message: CarServer.Action.toObject(CarServer.Action.decode(plan.payload), OPTS) };
}

const va = (vehicleAction: Record<string, unknown>) => ({ vehicleAction });
const closures = (over: Record<string, string>) => ({
  closureMoveRequest: {
    frontDriverDoor: 'CLOSURE_MOVE_TYPE_NONE',
    frontPassengerDoor: 'CLOSURE_MOVE_TYPE_NONE',
    rearDriverDoor: 'CLOSURE_MOVE_TYPE_NONE',
    rearPassengerDoor: 'CLOSURE_MOVE_TYPE_NONE',
    rearTrunk: 'CLOSURE_MOVE_TYPE_NONE',
    frontTrunk: 'CLOSURE_MOVE_TYPE_NONE',
    chargePort: 'CLOSURE_MOVE_TYPE_NONE',
    tonneau: 'CLOSURE_MOVE_TYPE_NONE',
    ...over,
  },
});
// float32 fields: test values are exactly representable (37.5, -122.25, 21.5, 5.5).
const LAT = 37.5;
const LON = -122.25;

type Golden = [name: string, body: unknown, domain: number, expected: unknown];

const GOLDEN: Golden[] = [
  // --- security (VCSEC RKE actions and infotainment)
  ['door_lock', undefined, VCSEC_DOMAIN, { RKEAction: 'RKE_ACTION_LOCK' }],
  ['door_unlock', {}, VCSEC_DOMAIN, { RKEAction: 'RKE_ACTION_UNLOCK' }],
  ['remote_start_drive', {}, VCSEC_DOMAIN, { RKEAction: 'RKE_ACTION_REMOTE_DRIVE' }],
  ['set_sentry_mode', { on: true }, INFOTAINMENT, va({ vehicleControlSetSentryModeAction: { on: true } })],
  ['set_sentry_mode', { on: false }, INFOTAINMENT, va({ vehicleControlSetSentryModeAction: { on: false } })],
  ['guest_mode', { enable: true }, INFOTAINMENT, va({ guestModeAction: { GuestModeActive: true } })],
  // --- access
  ['set_valet_mode', { on: true, password: '1234' }, INFOTAINMENT, va({ vehicleControlSetValetModeAction: { on: true, password: '1234' } })],
  ['set_valet_mode', { on: false }, INFOTAINMENT, va({ vehicleControlSetValetModeAction: { on: false, password: '' } })],
  ['reset_valet_pin', {}, INFOTAINMENT, va({ vehicleControlResetValetPinAction: {} })],
  ['set_pin_to_drive', { on: true, password: '4321' }, INFOTAINMENT, va({ vehicleControlSetPinToDriveAction: { on: true, password: '4321' } })],
  ['reset_pin_to_drive_pin', {}, INFOTAINMENT, va({ vehicleControlResetPinToDriveAction: {} })],
  ['clear_pin_to_drive_admin', {}, INFOTAINMENT, va({ vehicleControlResetPinToDriveAdminAction: {} })],
  ['speed_limit_activate', { pin: '0042' }, INFOTAINMENT, va({ drivingSpeedLimitAction: { activate: true, pin: '0042' } })],
  ['speed_limit_deactivate', { pin: '0042' }, INFOTAINMENT, va({ drivingSpeedLimitAction: { activate: false, pin: '0042' } })],
  ['speed_limit_clear_pin', { pin: '9876' }, INFOTAINMENT, va({ drivingClearSpeedLimitPinAction: { pin: '9876' } })],
  ['speed_limit_clear_pin_admin', {}, INFOTAINMENT, va({ drivingClearSpeedLimitPinAdminAction: {} })],
  ['speed_limit_set_limit', { limit_mph: 65.5 }, INFOTAINMENT, va({ drivingSetSpeedLimitAction: { limitMph: 65.5 } })],
  ['parental_controls_activate', { pin: '1111' }, INFOTAINMENT, va({ parentalControlsAction: { activate: true, pin: '1111' } })],
  ['parental_controls_deactivate', { pin: '1111' }, INFOTAINMENT, va({ parentalControlsAction: { activate: false, pin: '1111' } })],
  ['parental_controls_clear_pin_admin', {}, INFOTAINMENT, va({ parentalControlsClearPinAdminAction: {} })],
  ['parental_controls_enable_setting', { setting: 'Curfew', enable: true }, INFOTAINMENT, va({ parentalControlsEnableSettingsAction: { setting: 'Curfew', enable: true } })],
  ['parental_controls_enable_setting', { setting: 'SpeedLimit', enable: false }, INFOTAINMENT, va({ parentalControlsEnableSettingsAction: { setting: 'SpeedLimit', enable: false } })],
  ['parental_controls_set_speed_limit', { limit_mph: 70 }, INFOTAINMENT, va({ parentalControlsSetSpeedLimitAction: { limitMph: 70 } })],
  // --- closures
  ['actuate_trunk', { which_trunk: 'front' }, VCSEC_DOMAIN, closures({ frontTrunk: 'CLOSURE_MOVE_TYPE_MOVE' })],
  ['actuate_trunk', { which_trunk: 'rear' }, VCSEC_DOMAIN, closures({ rearTrunk: 'CLOSURE_MOVE_TYPE_MOVE' })],
  ['open_tonneau', {}, VCSEC_DOMAIN, closures({ tonneau: 'CLOSURE_MOVE_TYPE_OPEN' })],
  ['close_tonneau', {}, VCSEC_DOMAIN, closures({ tonneau: 'CLOSURE_MOVE_TYPE_CLOSE' })],
  ['stop_tonneau', {}, VCSEC_DOMAIN, closures({ tonneau: 'CLOSURE_MOVE_TYPE_STOP' })],
  ['window_control', { command: 'vent' }, INFOTAINMENT, va({ vehicleControlWindowAction: { vent: {} } })],
  ['window_control', { command: 'close', lat: LAT, lon: LON }, INFOTAINMENT, va({ vehicleControlWindowAction: { close: {} } })],
  ['sun_roof_control', { state: 'vent' }, INFOTAINMENT, va({ vehicleControlSunroofOpenCloseAction: { vent: {} } })],
  ['sun_roof_control', { state: 'close' }, INFOTAINMENT, va({ vehicleControlSunroofOpenCloseAction: { close: {} } })],
  // --- charging
  ['charge_start', {}, INFOTAINMENT, va({ chargingStartStopAction: { start: {} } })],
  ['charge_stop', {}, INFOTAINMENT, va({ chargingStartStopAction: { stop: {} } })],
  ['charge_standard', {}, INFOTAINMENT, va({ chargingStartStopAction: { startStandard: {} } })],
  ['charge_max_range', {}, INFOTAINMENT, va({ chargingStartStopAction: { startMaxRange: {} } })],
  ['charge_port_door_open', {}, INFOTAINMENT, va({ chargePortDoorOpen: {} })],
  ['charge_port_door_close', {}, INFOTAINMENT, va({ chargePortDoorClose: {} })],
  ['set_charge_limit', { percent: 80 }, INFOTAINMENT, va({ chargingSetLimitAction: { percent: 80 } })],
  ['set_charging_amps', { charging_amps: 16 }, INFOTAINMENT, va({ setChargingAmpsAction: { chargingAmps: 16 } })],
  // --- climate
  ['auto_conditioning_start', {}, INFOTAINMENT, va({ hvacAutoAction: { powerOn: true, manualOverride: false } })],
  ['auto_conditioning_stop', {}, INFOTAINMENT, va({ hvacAutoAction: { powerOn: false, manualOverride: false } })],
  [
    'set_temps',
    { driver_temp: 21.5, passenger_temp: 19 },
    INFOTAINMENT,
    va({
      hvacTemperatureAdjustmentAction: {
        deltaCelsius: 0,
        deltaPercent: 0,
        absoluteCelsius: 0,
        level: { TEMP_MAX: {} },
        hvacTemperatureZone: [],
        driverTempCelsius: 21.5,
        passengerTempCelsius: 19,
      },
    }),
  ],
  ['set_preconditioning_max', { on: true }, INFOTAINMENT, va({ hvacSetPreconditioningMaxAction: { on: true, manualOverride: false, manualOverrideMode: [] } })],
  ['set_bioweapon_mode', { on: true, manual_override: true }, INFOTAINMENT, va({ hvacBioweaponModeAction: { on: true, manualOverride: true } })],
  ['set_cabin_overheat_protection', { on: true, fan_only: true }, INFOTAINMENT, va({ setCabinOverheatProtectionAction: { on: true, fanOnly: true } })],
  ['set_climate_keeper_mode', { climate_keeper_mode: 2 }, INFOTAINMENT, va({ hvacClimateKeeperAction: { ClimateKeeperAction: 'ClimateKeeperAction_Dog', manualOverride: false } })],
  ['set_climate_keeper_mode', { climate_keeper_mode: 3, manual_override: true }, INFOTAINMENT, va({ hvacClimateKeeperAction: { ClimateKeeperAction: 'ClimateKeeperAction_Camp', manualOverride: true } })],
  // Service: 0 low, 1 medium, 2 high → CopActivationTemp Low(1)/Medium(2)/High(3).
  ['set_cop_temp', { cop_temp: 0 }, INFOTAINMENT, va({ setCopTempAction: { copActivationTemp: 'CopActivationTempLow' } })],
  ['set_cop_temp', { cop_temp: 2 }, INFOTAINMENT, va({ setCopTempAction: { copActivationTemp: 'CopActivationTempHigh' } })],
  ['remote_seat_heater_request', { seat_position: 4, level: 2 }, INFOTAINMENT, va({ hvacSeatHeaterActions: { hvacSeatHeaterAction: [{ SEAT_HEATER_MED: {}, CAR_SEAT_REAR_CENTER: {} }] } })],
  ['remote_seat_heater_request', { seat_position: 0, level: 0 }, INFOTAINMENT, va({ hvacSeatHeaterActions: { hvacSeatHeaterAction: [{ SEAT_HEATER_OFF: {}, CAR_SEAT_FRONT_LEFT: {} }] } })],
  ['remote_seat_heater_request', { seat_position: 8, level: 3 }, INFOTAINMENT, va({ hvacSeatHeaterActions: { hvacSeatHeaterAction: [{ SEAT_HEATER_HIGH: {}, CAR_SEAT_THIRD_ROW_RIGHT: {} }] } })],
  // Cooler level is not shifted: 3 (high) → HvacSeatCoolerLevel_High, 0 (off) → _Off.
  ['remote_seat_cooler_request', { seat_position: 2, seat_cooler_level: 3 }, INFOTAINMENT, va({ hvacSeatCoolerActions: { hvacSeatCoolerAction: [{ seatCoolerLevel: 'HvacSeatCoolerLevel_High', seatPosition: 'HvacSeatCoolerPosition_FrontRight' }] } })],
  ['remote_seat_cooler_request', { seat_position: 1, seat_cooler_level: 0 }, INFOTAINMENT, va({ hvacSeatCoolerActions: { hvacSeatCoolerAction: [{ seatCoolerLevel: 'HvacSeatCoolerLevel_Off', seatPosition: 'HvacSeatCoolerPosition_FrontLeft' }] } })],
  ['remote_auto_seat_climate_request', { auto_seat_position: 1, auto_climate_on: true }, INFOTAINMENT, va({ autoSeatClimateAction: { carseat: [{ on: true, seatPosition: 'AutoSeatPosition_FrontLeft' }] } })],
  ['remote_steering_wheel_heater_request', { on: true }, INFOTAINMENT, va({ hvacSteeringWheelHeaterAction: { powerOn: true } })],
  // --- media
  ['adjust_volume', { volume: 5.5 }, INFOTAINMENT, va({ mediaUpdateVolume: { volumeAbsoluteFloat: 5.5 } })],
  ['media_toggle_playback', {}, INFOTAINMENT, va({ mediaPlayAction: {} })],
  ['media_next_track', {}, INFOTAINMENT, va({ mediaNextTrack: {} })],
  ['media_prev_track', {}, INFOTAINMENT, va({ mediaPreviousTrack: {} })],
  ['media_next_fav', {}, INFOTAINMENT, va({ mediaNextFavorite: {} })],
  ['media_prev_fav', {}, INFOTAINMENT, va({ mediaPreviousFavorite: {} })],
  ['media_volume_up', {}, INFOTAINMENT, va({ mediaUpdateVolume: { volumeDelta: 1 } })],
  ['media_volume_down', {}, INFOTAINMENT, va({ mediaUpdateVolume: { volumeDelta: -1 } })],
  // --- software
  ['schedule_software_update', { offset_sec: 3600 }, INFOTAINMENT, va({ vehicleControlScheduleSoftwareUpdateAction: { offsetSec: 3600 } })],
  ['cancel_software_update', {}, INFOTAINMENT, va({ vehicleControlCancelSoftwareUpdateAction: {} })],
  // --- schedules (TUE=4 | THU=16 = 20; WEEKDAYS = 62)
  [
    'add_charge_schedule',
    { days_of_week: 'Tue, THU', enabled: true, start_enabled: true, start_time: 120, end_enabled: false, lat: LAT, lon: LON },
    INFOTAINMENT,
    va({
      addChargeScheduleAction: {
        id: 1700000000,
        name: '',
        daysOfWeek: 20,
        startEnabled: true,
        startTime: 120,
        endEnabled: false,
        endTime: 0,
        oneTime: false,
        enabled: true,
        latitude: LAT,
        longitude: LON,
      },
    }),
  ],
  [
    'add_charge_schedule',
    { days_of_week: 'ALL', enabled: false, start_enabled: false, end_enabled: true, end_time: 420, lat: LAT, lon: LON, id: 77, one_time: true },
    INFOTAINMENT,
    va({
      addChargeScheduleAction: {
        id: 77,
        name: '',
        daysOfWeek: 127,
        startEnabled: false,
        startTime: 0,
        endEnabled: true,
        endTime: 420,
        oneTime: true,
        enabled: false,
        latitude: LAT,
        longitude: LON,
      },
    }),
  ],
  ['remove_charge_schedule', { id: 1700000000 }, INFOTAINMENT, va({ removeChargeScheduleAction: { id: 1700000000 } })],
  [
    'add_precondition_schedule',
    { days_of_week: 'weekdays', enabled: true, precondition_time: 450, lat: LAT, lon: LON, id: 42 },
    INFOTAINMENT,
    va({
      addPreconditionScheduleAction: {
        id: 42,
        name: '',
        daysOfWeek: 62,
        preconditionTime: 450,
        oneTime: false,
        enabled: true,
        latitude: LAT,
        longitude: LON,
      },
    }),
  ],
  ['remove_precondition_schedule', { id: 42 }, INFOTAINMENT, va({ removePreconditionScheduleAction: { id: 42 } })],
  ['set_scheduled_charging', { enable: true, time: 90 }, INFOTAINMENT, va({ scheduledChargingAction: { enabled: true, chargingTime: 90 } })],
  ['set_scheduled_charging', { enable: false }, INFOTAINMENT, va({ scheduledChargingAction: { enabled: false, chargingTime: 0 } })],
  [
    'set_scheduled_departure',
    { enable: true, departure_time: 480, preconditioning_enabled: true, off_peak_charging_weekdays_only: true, end_off_peak_time: 360 },
    INFOTAINMENT,
    va({
      scheduledDepartureAction: {
        enabled: true,
        departureTime: 480,
        preconditioningTimes: { allWeek: {} },
        offPeakChargingTimes: { weekdays: {} },
        offPeakHoursEndTime: 360,
      },
    }),
  ],
  [
    'set_scheduled_departure',
    { enable: false },
    INFOTAINMENT,
    va({
      scheduledDepartureAction: {
        enabled: false,
        departureTime: 0,
        preconditioningTimes: null,
        offPeakChargingTimes: null,
        offPeakHoursEndTime: 0,
      },
    }),
  ],
  // --- vehicle
  ['flash_lights', {}, INFOTAINMENT, va({ vehicleControlFlashLightsAction: {} })],
  ['honk_horn', {}, INFOTAINMENT, va({ vehicleControlHonkHornAction: {} })],
  ['trigger_homelink', { lat: LAT, lon: LON }, INFOTAINMENT, va({ vehicleControlTriggerHomelinkAction: { location: { latitude: LAT, longitude: LON }, token: '' } })],
  ['set_low_power_mode', { enable: true }, INFOTAINMENT, va({ setLowPowerModeAction: { lowPowerMode: true } })],
  ['keep_accessory_power_mode', { enable: true }, INFOTAINMENT, va({ setKeepAccessoryPowerModeAction: { keepAccessoryPowerMode: true } })],
  ['set_vehicle_name', { vehicle_name: 'Road Runner' }, INFOTAINMENT, va({ setVehicleNameAction: { vehicleName: 'Road Runner' } })],
  ['erase_user_data', {}, INFOTAINMENT, va({ eraseUserDataAction: { reason: '' } })],
];

describe('golden payloads', () => {
  it.each(GOLDEN)('%s %j', (name, body, domain, expected) => {
    const r = planCommand(name, body, ctx);
    if (!r.ok) throw new Error(`rejected: ${JSON.stringify(r.error.messages)}`);
    const got = decode(r.plan);
    expect(got.domain).toBe(domain);
    expect(got.message).toEqual(expected);
  });

  it('covers every command that can be signed', () => {
    const signable = COMMANDS.filter((c) => c.mode === 'signed' || c.mode === 'mixed').map((c) => c.name);
    const covered = new Set(GOLDEN.map((g) => g[0]));
    expect(signable.filter((n) => !covered.has(n))).toEqual([]);
    expect(signable.length).toBe(69);
  });

  it('signed plans carry the domain the catalogue declares', () => {
    for (const [name, body, domain] of GOLDEN) {
      expect(COMMANDS.find((c) => c.name === name)?.domain).toBe(domain);
    }
  });

  it('ignores unknown body fields, like the service', () => {
    const r = planCommand('set_charge_limit', { percent: 90, colour: 'red' }, ctx);
    if (!r.ok) throw new Error('rejected');
    expect(decode(r.plan).message).toEqual(va({ chargingSetLimitAction: { percent: 90 } }));
  });
});
