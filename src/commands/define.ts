/**
 * Helpers the area files use to declare commands: payload encoders, shared field schemas,
 * and `command()` which erases the per-command body type into a CommandDef.
 */
import { z } from 'zod';
import { Domain } from '../protocol/domains.js';
import type { DomainId } from '../protocol/domains.js';
import { CarServer, VCSEC } from '../protocol/pb.js';
import type { Area, BuildContext, CommandDef, Mode, Plan } from './types.js';

// ---------------------------------------------------------------------------------------
// Payload encoders

/** A signed plan for the vehicle-security domain (VCSEC.UnsignedMessage). */
export function vcsecPlan(msg: VCSEC.UnsignedMessage.$Properties): Plan {
  return {
    kind: 'signed',
    domain: Domain.VEHICLE_SECURITY,
    payload: VCSEC.UnsignedMessage.encode(msg).finish(),
  };
}

/** A signed plan for the infotainment domain: CarServer.Action{vehicleAction: action}. */
export function infotainmentPlan(action: CarServer.VehicleAction.$Properties): Plan {
  return {
    kind: 'signed',
    domain: Domain.INFOTAINMENT,
    payload: CarServer.Action.encode({ vehicleAction: action }).finish(),
  };
}

export const REST: Plan = Object.freeze({ kind: 'rest' }) as Plan;

// ---------------------------------------------------------------------------------------
// Declaration

interface Spec<S extends z.ZodType> {
  name: string;
  area: Area;
  summary: string;
  /** Defaults to an object without fields (any object body, or none, is accepted). */
  schema?: S;
  ownerOnly?: boolean;
  notes?: string;
  secretFields?: readonly string[];
}

type Builder<S extends z.ZodType> = (body: z.output<S>, ctx: BuildContext) => Plan;

function make<S extends z.ZodType>(
  spec: Spec<S>,
  mode: Mode,
  domain: DomainId | null,
  build: Builder<S>,
): CommandDef {
  const schema = (spec.schema ?? noBody) as z.ZodType;
  return Object.freeze({
    name: spec.name,
    area: spec.area,
    summary: spec.summary,
    schema,
    domain,
    mode,
    ownerOnly: spec.ownerOnly ?? false,
    secretFields: Object.freeze([...(spec.secretFields ?? [])]),
    ...(spec.notes === undefined ? {} : { notes: spec.notes }),
    // The body reaching build() has passed `schema`, so the cast only restores its type.
    build: (body: unknown, ctx: BuildContext) => build(body as z.output<S>, ctx),
  });
}

/** Always signed for the infotainment domain. */
export function infotainment<S extends z.ZodType = typeof noBody>(
  spec: Spec<S> & { build: Builder<S> },
): CommandDef {
  return make(spec, 'signed', Domain.INFOTAINMENT, spec.build);
}

/** Always signed for the vehicle-security domain. */
export function security<S extends z.ZodType = typeof noBody>(
  spec: Spec<S> & { build: Builder<S> },
): CommandDef {
  return make(spec, 'signed', Domain.VEHICLE_SECURITY, spec.build);
}

/**
 * The signed protocol has no message for this command: the validated body is forwarded
 * unchanged to the service's REST endpoint. `notes` should say why.
 */
export function forwarded<S extends z.ZodType = typeof noBody>(spec: Spec<S>): CommandDef {
  return make(spec, 'rest', null, () => REST);
}

/** Signed for some values (for `domain`), forwarded for others; `build` decides. */
export function mixed<S extends z.ZodType>(
  spec: Spec<S> & { domain: DomainId; build: Builder<S>; notes: string },
): CommandDef {
  return make(spec, 'mixed', spec.domain, spec.build);
}

/** REST wake_up. */
export function wake(spec: Spec<typeof noBody>): CommandDef {
  return make(spec, 'wake', null, () => ({ kind: 'wake' }));
}

// ---------------------------------------------------------------------------------------
// Shared field schemas. Unknown body fields are ignored (z.object strips them), as the
// service does; wrong types and out-of-range values are always rejected.

export const noBody = z.object({});

export const bool = (description: string) => z.boolean().describe(description);

/**
 * Four-digit PIN. The reference proxy passes speed-limit and PIN-to-drive PINs through
 * unchecked (the vehicle then rejects them after a round trip); the service documents
 * four digits, so we check exactly /^\d{4}$/ up front. The message never echoes the value.
 */
export const pin = (description: string) =>
  z
    .string({ error: (iss) => (iss.input === undefined ? 'is required' : 'must be a string of four digits') })
    .regex(/^\d{4}$/, { error: 'must be exactly four digits' })
    .describe(description);

export const latitude = () => z.number().min(-90).max(90).describe('latitude in degrees');
export const longitude = () => z.number().min(-180).max(180).describe('longitude in degrees');

/**
 * Minutes after midnight, vehicle local time. 1440 (24:00) is accepted because the
 * reference's departure-time check allows it; the vehicle treats it as end of day.
 */
export const minutesAfterMidnight = (description: string) =>
  z.number().int().min(0).max(1440).describe(description);

/** Schedule ids are epoch seconds (uint64 on the wire); kept within JS safe integers. */
export const scheduleId = (description: string) =>
  z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).describe(description);

/**
 * Day names → the protocol's days_of_week bit mask (bit 0 = Sunday … bit 6 = Saturday).
 * The reference only knows TUES/THURS as abbreviations; the common TUE/THU (and THUR)
 * are accepted too. Case-insensitive, comma-separated, blanks around names ignored.
 */
const DAY_BITS: Readonly<Record<string, number>> = Object.freeze({
  SUN: 1, SUNDAY: 1,
  MON: 2, MONDAY: 2,
  TUE: 4, TUES: 4, TUESDAY: 4,
  WED: 8, WEDNESDAY: 8,
  THU: 16, THUR: 16, THURS: 16, THURSDAY: 16,
  FRI: 32, FRIDAY: 32,
  SAT: 64, SATURDAY: 64,
  ALL: 127,
  WEEKDAYS: 62,
});

export function parseDays(s: string): number | undefined {
  let mask = 0;
  for (const part of s.split(',')) {
    const bits = DAY_BITS[part.trim().toUpperCase()];
    if (bits === undefined) return undefined;
    mask |= bits;
  }
  return mask === 0 ? undefined : mask;
}

export const daysOfWeek = () =>
  z
    .string()
    .refine((s) => parseDays(s) !== undefined, {
      error: 'must be comma-separated day names (SUN, MON, TUE, WED, THU, FRI, SAT, full names, ALL or WEEKDAYS)',
    })
    .describe('comma-separated day names, e.g. "MON,TUE,THU", "ALL" or "WEEKDAYS"');

/** parseDays for a value the schema already accepted. */
export function daysMask(s: string): number {
  const m = parseDays(s);
  if (m === undefined) throw new Error('daysMask: value was not validated');
  return m;
}

/** Adds a "required" issue for `field` when `cond` holds and the field is absent. */
export function requireWhen(
  ctx: z.RefinementCtx,
  cond: boolean,
  value: unknown,
  field: string,
  why: string,
): void {
  if (cond && value === undefined) {
    ctx.addIssue({ code: 'custom', path: [field], message: `is required ${why}` });
  }
}
