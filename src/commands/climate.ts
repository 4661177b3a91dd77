/** Climate: cabin HVAC, defense/overheat/keeper modes, seat and steering-wheel heating. */
import { z } from 'zod';
import type { CarServer } from '../protocol/pb.js';
import { bool, forwarded, infotainment, infotainmentPlan } from './define.js';
import type { CommandDef } from './types.js';

/** Cabin set points: the vehicle's min_avail_temp / max_avail_temp are 15 and 28 °C. */
const celsius = (description: string) => z.number().min(15).max(28).describe(description);

/** Heater/cooler level as the service numbers it: 0 off, 1 low, 2 medium, 3 high. */
const level = (description: string) => z.number().int().min(0).max(3).describe(description);

type SeatHeater = CarServer.HvacSeatHeaterActions.HvacSeatHeaterAction.$Properties;

/**
 * remote_seat_heater_request seat_position index → the protocol's seat oneof member, in
 * the service's order (same as the reference): 0 front left, 1 front right, 2 rear left,
 * 3 rear left backrest, 4 rear center, 5 rear right, 6 rear right backrest,
 * 7 third row left, 8 third row right.
 */
const HEATER_SEATS = [
  'CAR_SEAT_FRONT_LEFT',
  'CAR_SEAT_FRONT_RIGHT',
  'CAR_SEAT_REAR_LEFT',
  'CAR_SEAT_REAR_LEFT_BACK',
  'CAR_SEAT_REAR_CENTER',
  'CAR_SEAT_REAR_RIGHT',
  'CAR_SEAT_REAR_RIGHT_BACK',
  'CAR_SEAT_THIRD_ROW_LEFT',
  'CAR_SEAT_THIRD_ROW_RIGHT',
] as const satisfies readonly (keyof SeatHeater)[];

const HEATER_LEVELS = ['SEAT_HEATER_OFF', 'SEAT_HEATER_LOW', 'SEAT_HEATER_MED', 'SEAT_HEATER_HIGH'] as const satisfies readonly (keyof SeatHeater)[];

function seatHeaterAction(seat: number, lvl: number): SeatHeater {
  const seatKey = HEATER_SEATS[seat];
  const levelKey = HEATER_LEVELS[lvl];
  if (seatKey === undefined || levelKey === undefined) throw new Error('seatHeaterAction: value was not validated');
  return { [levelKey]: {}, [seatKey]: {} };
}

/** CarServer.HvacSeatCoolerActions.HvacSeatCoolerLevel_E.HvacSeatCoolerLevel_Off. */
const COOLER_LEVEL_OFF = 1;

export const CLIMATE_COMMANDS: readonly CommandDef[] = [
  infotainment({
    name: 'auto_conditioning_start',
    area: 'climate',
    summary: 'Turn cabin climate control on.',
    build: () => infotainmentPlan({ hvacAutoAction: { powerOn: true } }),
  }),
  infotainment({
    name: 'auto_conditioning_stop',
    area: 'climate',
    summary: 'Turn cabin climate control off.',
    build: () => infotainmentPlan({ hvacAutoAction: { powerOn: false } }),
  }),
  infotainment({
    name: 'set_temps',
    area: 'climate',
    summary: 'Set driver and passenger cabin temperatures in °C.',
    // The reference proxy reads a missing temperature as 0 °C and sends it. The signed
    // message always carries both set points (no "leave unchanged" marker), so both are
    // required here; a missing one is a 400, never 0 °C.
    notes: 'Both temperatures are required: the signed message carries both zones.',
    schema: z.object({
      driver_temp: celsius('driver set point in °C (15..28)'),
      passenger_temp: celsius('passenger set point in °C (15..28)'),
    }),
    build: (b) =>
      infotainmentPlan({
        hvacTemperatureAdjustmentAction: {
          driverTempCelsius: b.driver_temp,
          passengerTempCelsius: b.passenger_temp,
          // Fact from the reference's builder: set-point changes carry level TEMP_MAX.
          level: { TEMP_MAX: {} },
        },
      }),
  }),
  infotainment({
    name: 'set_preconditioning_max',
    area: 'climate',
    summary: 'Turn max preconditioning (defrost) on or off.',
    schema: z.object({
      on: bool('true turns max preconditioning on'),
      manual_override: bool('override automatic control (default false)').optional(),
    }),
    build: (b) =>
      infotainmentPlan({ hvacSetPreconditioningMaxAction: { on: b.on, manualOverride: b.manual_override ?? false } }),
  }),
  infotainment({
    name: 'set_bioweapon_mode',
    area: 'climate',
    summary: 'Turn bioweapon defense mode on or off.',
    schema: z.object({
      on: bool('true turns defense mode on'),
      manual_override: bool('override automatic control (default false)').optional(),
    }),
    build: (b) => infotainmentPlan({ hvacBioweaponModeAction: { on: b.on, manualOverride: b.manual_override ?? false } }),
  }),
  infotainment({
    name: 'set_cabin_overheat_protection',
    area: 'climate',
    summary: 'Turn cabin overheat protection on or off, optionally fan only.',
    schema: z.object({
      on: bool('true turns overheat protection on'),
      fan_only: bool('use the fan only, no A/C (default false)').optional(),
    }),
    build: (b) => infotainmentPlan({ setCabinOverheatProtectionAction: { on: b.on, fanOnly: b.fan_only ?? false } }),
  }),
  infotainment({
    name: 'set_climate_keeper_mode',
    area: 'climate',
    summary: 'Set climate keeper mode: 0 off, 1 keep, 2 dog, 3 camp.',
    schema: z.object({
      climate_keeper_mode: z.number().int().min(0).max(3).describe('0 off, 1 keep, 2 dog, 3 camp'),
      manual_override: bool('override automatic control (default false)').optional(),
    }),
    // Service values 0..3 equal HvacClimateKeeperAction.ClimateKeeperAction_E Off/On/Dog/Camp.
    build: (b) =>
      infotainmentPlan({
        hvacClimateKeeperAction: { ClimateKeeperAction: b.climate_keeper_mode, manualOverride: b.manual_override ?? false },
      }),
  }),
  infotainment({
    name: 'set_cop_temp',
    area: 'climate',
    summary: 'Set the cabin overheat protection temperature: 0 low (30 °C), 1 medium (35 °C), 2 high (40 °C).',
    schema: z.object({ cop_temp: z.number().int().min(0).max(2).describe('0 low, 1 medium, 2 high') }),
    // The service numbers the levels 0 low, 1 medium, 2 high; ClimateState.CopActivationTemp
    // is 0 unspecified, 1 low, 2 medium, 3 high. The reference passes the number through
    // (0 → unspecified, 2 → medium); we follow the service and add one.
    build: (b) => infotainmentPlan({ setCopTempAction: { copActivationTemp: b.cop_temp + 1 } }),
  }),
  infotainment({
    name: 'remote_seat_heater_request',
    area: 'climate',
    summary: 'Set one seat heater level; needs climate on.',
    schema: z.object({
      seat_position: z
        .number()
        .int()
        .min(0)
        .max(8)
        .describe('0 front left, 1 front right, 2 rear left, 3 rear left back, 4 rear center, 5 rear right, 6 rear right back, 7 third row left, 8 third row right'),
      level: level('0 off, 1 low, 2 medium, 3 high'),
    }),
    build: (b) =>
      infotainmentPlan({ hvacSeatHeaterActions: { hvacSeatHeaterAction: [seatHeaterAction(b.seat_position, b.level)] } }),
  }),
  infotainment({
    name: 'remote_seat_cooler_request',
    area: 'climate',
    summary: 'Set a front seat cooler (ventilation) level; needs climate on.',
    schema: z.object({
      seat_position: z.number().int().min(1).max(2).describe('1 front left, 2 front right'),
      seat_cooler_level: level('0 off, 1 low, 2 medium, 3 high'),
    }),
    // seat_cooler_level is the service's 0..3 (off..high) and maps to the protocol's
    // HvacSeatCoolerLevel Off(1)..High(4) without any further shift. The reference first
    // subtracts one and later adds one, so it sends level 0 as Unknown and 3 as Med.
    build: (b) =>
      infotainmentPlan({
        hvacSeatCoolerActions: {
          hvacSeatCoolerAction: [{ seatCoolerLevel: COOLER_LEVEL_OFF + b.seat_cooler_level, seatPosition: b.seat_position }],
        },
      }),
  }),
  infotainment({
    name: 'remote_auto_seat_climate_request',
    area: 'climate',
    summary: 'Turn automatic seat climate on or off for a front seat.',
    schema: z.object({
      auto_seat_position: z.number().int().min(1).max(2).describe('1 front left, 2 front right'),
      auto_climate_on: bool('true turns automatic seat climate on'),
    }),
    build: (b) =>
      infotainmentPlan({
        autoSeatClimateAction: { carseat: [{ on: b.auto_climate_on, seatPosition: b.auto_seat_position }] },
      }),
  }),
  infotainment({
    name: 'remote_steering_wheel_heater_request',
    area: 'climate',
    summary: 'Turn the steering wheel heater on or off (vehicles without auto steering-wheel heat).',
    schema: z.object({ on: bool('true turns the heater on') }),
    build: (b) => infotainmentPlan({ hvacSteeringWheelHeaterAction: { powerOn: b.on } }),
  }),
  forwarded({
    name: 'remote_steering_wheel_heat_level_request',
    area: 'climate',
    summary: 'Set the steering wheel heat level.',
    notes: 'The signed protocol has no steering-wheel heat-level action; forwarded to REST.',
    schema: z.object({ level: level('heat level (0..3)') }),
  }),
  forwarded({
    name: 'remote_auto_steering_wheel_heat_climate_request',
    area: 'climate',
    summary: 'Turn automatic steering wheel heat on or off.',
    notes: 'The signed protocol has no automatic steering-wheel heat action; forwarded to REST.',
    schema: z.object({ on: bool('true turns automatic steering wheel heat on') }),
  }),
];
