/**
 * Shared simulator types: fleet description, roles, command outcomes.
 * Pure data; no I/O.
 */

/** Key roles, named after the protocol's `Keys.Role` enum (numbers are the wire values). */
export const ROLE_NUMBERS = {
  none: 0,
  service: 1,
  owner: 2,
  driver: 3,
  fleet_manager: 4,
  vehicle_monitor: 5,
  charging_manager: 6,
  guest: 8,
} as const;

export type RoleName = keyof typeof ROLE_NUMBERS;

export function roleFromNumber(n: number): RoleName | undefined {
  for (const [name, value] of Object.entries(ROLE_NUMBERS)) if (value === n) return name as RoleName;
  return undefined;
}

export function isRoleName(s: string): s is RoleName {
  return Object.prototype.hasOwnProperty.call(ROLE_NUMBERS, s);
}

export type Connectivity = 'online' | 'asleep' | 'offline';

/** One vehicle as described in a fleet file (all fields but `vin` optional). */
export interface VehicleSpec {
  vin: string;
  id?: number;
  vehicle_id?: number;
  display_name?: string;
  /** Model letter or name: 'S' | 'X' | '3' | 'Y' | 'Cybertruck'. */
  model?: string;
  /** Model year; S/X built before 2021 do not support the signed command protocol. */
  year?: number;
  /** Firmware version string such as "2024.44.25". */
  firmware?: string;
  state?: Connectivity;
  /** Overrides the model/year rule when set. */
  signed_commands?: boolean;
  hide_private?: boolean;
  option_codes?: string;
  color?: string | null;
  latitude?: number;
  longitude?: number;
  battery_level?: number;
  charge_limit_soc?: number;
  /** Disconnected | Stopped | Charging | Complete | NoPower */
  charging_state?: string;
  charge_current_max?: number;
  locked?: boolean;
  user_present?: boolean;
  has_homelink?: boolean;
  /** A pending software update version the vehicle can schedule, or null. */
  update_available?: string | null;
  mobile_access_disabled?: boolean;
}

export interface FleetSpec {
  vehicles: VehicleSpec[];
}

/** Result of running a decoded command against a vehicle's state. */
export type Outcome =
  | { kind: 'ok'; /** extra fields for REST answers, e.g. queued */ data?: Record<string, unknown> }
  /** The vehicle refused: `result:false` with this reason (CarServer resultReason.plainText). */
  | { kind: 'refused'; reason: string }
  /** Protocol-level refusal: the vehicle answers with this MessageFault_E. */
  | { kind: 'fault'; fault: number; why: string };

/** A decoded command in the service's REST vocabulary: name plus parameters. */
export interface SimCommand {
  name: string;
  params: Record<string, unknown>;
}
