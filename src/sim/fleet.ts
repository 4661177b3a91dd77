/**
 * Fleet descriptions: the built-in default fleet and the parser for `--fleet FILE`
 * (JSON or YAML, validated with zod so a typo fails loudly instead of silently giving a
 * different vehicle).
 */
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { VcpError } from '../protocol/errors.js';
import type { FleetSpec, VehicleSpec } from './types.js';

/** Named VINs of the default fleet (fake but well-formed 17-character VINs). */
export const DEFAULT_FLEET_VINS = {
  /** Model Y, firmware 2024.44 (encrypts responses), online. */
  modern: '7SAYGDEE1PA000001',
  /** Model 3, firmware 2024.38, online. */
  modern2: '5YJ3E1EA8MF000002',
  /** Model Y, asleep: `wake_up` brings it online after 10–60 s (scaled). */
  asleep: '5YJYGDEF9LF000003',
  /** Model S built 2017: no signed-command support (422 on signed_command, REST commands run). */
  legacy: '5YJSA1E26HF000004',
  /** Model X shared with granular_access.hide_private: location omitted. */
  shared: '7SAXCBE6XNF000005',
  /** Model 3 on firmware 2023.12 (older than 2023.20). */
  oldFirmware: '5YJ3E1EB0KF000006',
} as const;

export const DEFAULT_FLEET: FleetSpec = {
  vehicles: [
    { vin: DEFAULT_FLEET_VINS.modern, model: 'Y', year: 2023, firmware: '2024.44.25', state: 'online', display_name: 'Sim Y', locked: false },
    {
      vin: DEFAULT_FLEET_VINS.modern2,
      model: '3',
      year: 2021,
      firmware: '2024.38.4',
      state: 'online',
      display_name: 'Sim 3',
      charging_state: 'Disconnected',
    },
    { vin: DEFAULT_FLEET_VINS.asleep, model: 'Y', year: 2020, firmware: '2024.20.1', state: 'asleep', display_name: 'Sleepy Y' },
    {
      vin: DEFAULT_FLEET_VINS.legacy,
      model: 'S',
      year: 2017,
      firmware: '2022.8.10',
      state: 'online',
      display_name: 'Legacy S',
    },
    {
      vin: DEFAULT_FLEET_VINS.shared,
      model: 'X',
      year: 2022,
      firmware: '2024.32.6',
      state: 'online',
      display_name: 'Shared X',
      hide_private: true,
    },
    {
      vin: DEFAULT_FLEET_VINS.oldFirmware,
      model: '3',
      year: 2019,
      firmware: '2023.12.5',
      state: 'online',
      display_name: 'Old firmware 3',
      update_available: null,
    },
  ],
};

const vehicleSchema = z
  .object({
    vin: z.string().regex(/^[A-HJ-NPR-Z0-9]{17}$/, 'a VIN is 17 characters (digits and capitals except I, O, Q)'),
    id: z.number().int().positive().optional(),
    vehicle_id: z.number().int().positive().optional(),
    display_name: z.string().optional(),
    model: z.string().optional(),
    year: z.number().int().min(2008).max(2100).optional(),
    firmware: z.string().regex(/^\d{4}\.\d+(\.\d+)*$/, 'firmware looks like 2024.44.25').optional(),
    state: z.enum(['online', 'asleep', 'offline']).optional(),
    signed_commands: z.boolean().optional(),
    hide_private: z.boolean().optional(),
    option_codes: z.string().optional(),
    color: z.string().nullable().optional(),
    latitude: z.number().optional(),
    longitude: z.number().optional(),
    battery_level: z.number().min(0).max(100).optional(),
    charge_limit_soc: z.number().min(50).max(100).optional(),
    charging_state: z.enum(['Disconnected', 'Stopped', 'Charging', 'Complete', 'NoPower']).optional(),
    charge_current_max: z.number().int().positive().optional(),
    locked: z.boolean().optional(),
    user_present: z.boolean().optional(),
    has_homelink: z.boolean().optional(),
    update_available: z.string().nullable().optional(),
    mobile_access_disabled: z.boolean().optional(),
  })
  .strict();

const fleetSchema = z.object({ vehicles: z.array(vehicleSchema).min(1) }).strict();

/** Parses a fleet description (JSON or YAML text). Throws VcpError `invalid_fleet`. */
export function parseFleet(text: string, source = 'fleet file'): FleetSpec {
  let raw: unknown;
  try {
    raw = parseYaml(text); // YAML is a superset of JSON
  } catch (e) {
    throw new VcpError('invalid_fleet', `${source} is neither JSON nor YAML: ${(e as Error).message}`, { status: 400 });
  }
  const parsed = fleetSchema.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    throw new VcpError('invalid_fleet', `${source} is not a valid fleet description (${problems}); see src/sim/README.md`, {
      status: 400,
    });
  }
  const vins = new Set<string>();
  for (const v of parsed.data.vehicles) {
    if (vins.has(v.vin)) throw new VcpError('invalid_fleet', `${source}: VIN ${v.vin} appears twice`, { status: 400 });
    vins.add(v.vin);
  }
  return parsed.data as FleetSpec;
}

/** Whether a vehicle requires (and supports) the signed command protocol. */
export function supportsSignedCommands(v: VehicleSpec): boolean {
  if (v.signed_commands !== undefined) return v.signed_commands;
  const sx = v.model === 'S' || v.model === 'X';
  return !(sx && (v.year ?? 2024) < 2021);
}
