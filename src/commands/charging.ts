/** Charging: start/stop/mode, charge port, limit, current, managed charging. */
import { z } from 'zod';
import { forwarded, infotainment, infotainmentPlan, latitude, longitude, minutesAfterMidnight } from './define.js';
import type { CommandDef } from './types.js';

/**
 * Charging current in amps. The largest on-board chargers draw up to 72–80 A; the vehicle
 * clamps any request to its own charge_current_request_max, so we only reject nonsense.
 */
const amps = (description: string) => z.number().int().min(0).max(80).describe(description);

/**
 * The spec does not show these bodies and the reference proxy forwards them unparsed, so
 * the fields are optional here; when present they must have the right type and range.
 */
const MANAGED_NOTE =
  'Managed-charging commands are served by the service itself (no vehicle protocol message); the body is forwarded unchanged. Fields are optional here because their requiredness is not documented; present fields are type-checked.';

export const CHARGING_COMMANDS: readonly CommandDef[] = [
  infotainment({
    name: 'charge_start',
    area: 'charging',
    summary: 'Start charging.',
    build: () => infotainmentPlan({ chargingStartStopAction: { start: {} } }),
  }),
  infotainment({
    name: 'charge_stop',
    area: 'charging',
    summary: 'Stop charging.',
    build: () => infotainmentPlan({ chargingStartStopAction: { stop: {} } }),
  }),
  infotainment({
    name: 'charge_standard',
    area: 'charging',
    summary: 'Charge in standard mode.',
    build: () => infotainmentPlan({ chargingStartStopAction: { startStandard: {} } }),
  }),
  infotainment({
    name: 'charge_max_range',
    area: 'charging',
    summary: 'Charge in max-range mode.',
    build: () => infotainmentPlan({ chargingStartStopAction: { startMaxRange: {} } }),
  }),
  infotainment({
    name: 'charge_port_door_open',
    area: 'charging',
    summary: 'Open (unlatch) the charge port door.',
    build: () => infotainmentPlan({ chargePortDoorOpen: {} }),
  }),
  infotainment({
    name: 'charge_port_door_close',
    area: 'charging',
    summary: 'Close the charge port door.',
    build: () => infotainmentPlan({ chargePortDoorClose: {} }),
  }),
  infotainment({
    name: 'set_charge_limit',
    area: 'charging',
    summary: 'Set the charge limit in percent.',
    // 50..100: the vehicle's charge_limit_soc_min / charge_limit_soc_max bounds.
    schema: z.object({ percent: z.number().int().min(50).max(100).describe('charge limit in percent (50..100)') }),
    build: (b) => infotainmentPlan({ chargingSetLimitAction: { percent: b.percent } }),
  }),
  infotainment({
    name: 'set_charging_amps',
    area: 'charging',
    summary: 'Set the charging current in amps.',
    schema: z.object({ charging_amps: amps('charging current in A (0..80; the vehicle clamps to its maximum)') }),
    build: (b) => infotainmentPlan({ setChargingAmpsAction: { chargingAmps: b.charging_amps } }),
  }),
  forwarded({
    name: 'set_managed_charge_current_request',
    area: 'charging',
    summary: 'Set the managed charging current request (fleet managed charging).',
    notes: MANAGED_NOTE,
    schema: z.object({ charging_amps: amps('requested charging current in A').optional() }),
  }),
  forwarded({
    name: 'set_managed_charger_location',
    area: 'charging',
    summary: 'Set the managed charger location (fleet managed charging).',
    notes: MANAGED_NOTE,
    schema: z.object({
      location: z.object({ lat: latitude(), lon: longitude() }).describe('charger position').optional(),
    }),
  }),
  forwarded({
    name: 'set_managed_scheduled_charging_time',
    area: 'charging',
    summary: 'Set the managed scheduled charging time (fleet managed charging).',
    notes: MANAGED_NOTE,
    schema: z.object({ time: minutesAfterMidnight('minutes after midnight, vehicle local time').optional() }),
  }),
];
