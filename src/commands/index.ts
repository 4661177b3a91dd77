/**
 * THE command catalogue: every vehicle command the proxy answers, with its JSON body
 * schema (zod), its protocol domain, and the pure function from a validated body to a
 * Plan — a signed payload (encoded VCSEC.UnsignedMessage or CarServer.Action), a REST
 * forward of the original body (the signed protocol has no message for it), or wake_up.
 *
 * This folder owns the only list of commands in the code base: the HTTP routes, the
 * OpenAPI document (openapi.ts), docs/commands.md (scripts/gen-command-docs.ts) and the
 * tests all read COMMANDS. Nothing else may list or special-case command names.
 *
 * It must not do I/O, read clocks (the build context injects `now`), log, or know about
 * sessions and transports. Validation errors never echo values (bodies carry PINs).
 *
 * Parameter names and meanings are the service's. Where the reference proxy's parsing is
 * known to be wrong, the area files follow the service and say so in a comment.
 */
import { VcpError } from '../protocol/errors.js';
import type { z } from 'zod';
import { ACCESS_COMMANDS } from './access.js';
import { CHARGING_COMMANDS } from './charging.js';
import { CLIMATE_COMMANDS } from './climate.js';
import { CLOSURE_COMMANDS } from './closures.js';
import { MEDIA_COMMANDS } from './media.js';
import { NAVIGATION_COMMANDS } from './navigation.js';
import { SCHEDULE_COMMANDS } from './schedules.js';
import { SECURITY_COMMANDS } from './security.js';
import { SOFTWARE_COMMANDS } from './software.js';
import { VEHICLE_COMMANDS } from './vehicle.js';
import { buildOpenApiDocument } from './openapi.js';
import { renderCommandDocs } from './docs.js';
import type { BuildContext, CommandDef, Plan } from './types.js';

export type { Area, BuildContext, CommandDef, Mode, Plan } from './types.js';

export const COMMANDS: readonly CommandDef[] = Object.freeze(
  [
    ...SECURITY_COMMANDS,
    ...ACCESS_COMMANDS,
    ...CLOSURE_COMMANDS,
    ...CHARGING_COMMANDS,
    ...CLIMATE_COMMANDS,
    ...MEDIA_COMMANDS,
    ...NAVIGATION_COMMANDS,
    ...SOFTWARE_COMMANDS,
    ...SCHEDULE_COMMANDS,
    ...VEHICLE_COMMANDS,
  ].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
);

// A Map, not an object: a name like "__proto__" or "constructor" must not find anything.
const BY_NAME: ReadonlyMap<string, CommandDef> = (() => {
  const m = new Map<string, CommandDef>();
  for (const c of COMMANDS) {
    if (m.has(c.name)) throw new Error(`duplicate command in catalogue: ${c.name}`);
    m.set(c.name, c);
  }
  return m;
})();

/** OpenAPI 3.1 document for every command endpoint (served at GET /api/1/commands). */
export function openApiDocument(): Record<string, unknown> {
  return buildOpenApiDocument(COMMANDS);
}

/** docs/commands.md, exactly as committed (scripts/gen-command-docs.ts writes it). */
export function commandDocsMarkdown(): string {
  return renderCommandDocs(COMMANDS);
}

export function findCommand(name: string): CommandDef | undefined {
  return BY_NAME.get(name);
}

export type PlanResult = { ok: true; plan: Plan; def: CommandDef } | { ok: false; error: VcpError };

const DEFAULT_CONTEXT: BuildContext = { now: () => Date.now() };

/**
 * Validate `rawBody` (the parsed JSON body; `undefined`/`null` = no body) for command
 * `name` and plan it. Never throws for bad input: unknown names give 400
 * `invalid_command`, bad bodies 400 `invalid_request` with `messages: {field: [problem]}`.
 */
export function planCommand(name: string, rawBody: unknown, ctx: BuildContext = DEFAULT_CONTEXT): PlanResult {
  const def = findCommand(name);
  if (!def) {
    return {
      ok: false,
      error: new VcpError('invalid_command', 'Unknown vehicle command; GET /api/1/commands lists the supported ones.', {
        status: 400,
      }),
    };
  }
  const body = rawBody === undefined || rawBody === null ? {} : rawBody;
  if (ctx === DEFAULT_CONTEXT && isEmptyObject(body)) {
    const cached = emptyBodyPlan(def);
    if (cached) return { ok: true, plan: copyPlan(cached), def };
  }
  const parsed = def.schema.safeParse(body, { error: defaultIssueMessage });
  if (!parsed.success) {
    return {
      ok: false,
      error: new VcpError(
        'invalid_request',
        `Invalid body for ${def.name}; see messages for each field, fix them and retry.`,
        { status: 400, messages: issuesToMessages(parsed.error.issues) },
      ),
    };
  }
  return { ok: true, plan: def.build(parsed.data, ctx), def };
}

/**
 * Bodiless calls (`{}` or no body: lock, honk, flash, start charging, …) are most of a
 * fleet's traffic, and their plan is the same every time; validating and encoding it per
 * request was a visible share of the proxy's CPU. So it is computed once per command and
 * copied out (each caller gets its own payload bytes). Only plans that provably do not
 * depend on the clock are kept: `computeEmptyBodyPlan` builds with a context that notices
 * a `now()` call. A `{}` the schema refuses is not cached; it takes the normal path and
 * gets its normal error.
 */
const EMPTY_BODY_PLANS = new WeakMap<CommandDef, Plan | false>();

function emptyBodyPlan(def: CommandDef): Plan | undefined {
  let plan = EMPTY_BODY_PLANS.get(def);
  if (plan === undefined) {
    plan = computeEmptyBodyPlan(def);
    EMPTY_BODY_PLANS.set(def, plan);
  }
  return plan || undefined;
}

/** The plan of `def` for an empty body, or false when it is refused or reads the clock. */
export function computeEmptyBodyPlan(def: CommandDef): Plan | false {
  const parsed = def.schema.safeParse({});
  if (!parsed.success) return false;
  let readClock = false;
  const plan = def.build(parsed.data, {
    now: () => {
      readClock = true;
      return Date.now();
    },
  });
  return readClock ? false : Object.freeze(plan);
}

function copyPlan(plan: Plan): Plan {
  // `new Uint8Array(x)` copies; `slice()` would not when protobufjs handed us a Buffer
  // (Buffer#slice is a view).
  return plan.kind === 'signed' ? { kind: 'signed', domain: plan.domain, payload: new Uint8Array(plan.payload) } : { ...plan };
}

/** A plain JSON object without own properties (`{}`); JSON's `"__proto__"` key is an own one. */
function isEmptyObject(body: unknown): boolean {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  for (const _ in body) return false;
  return Object.getPrototypeOf(body) === Object.prototype;
}

/**
 * Field-level messages in the service's `messages` shape. Nested fields are dotted
 * (`location.lat`); a problem with the body as a whole is reported under `body`.
 */
export function issuesToMessages(issues: readonly z.core.$ZodIssue[]): Record<string, string[]> {
  const out: Record<string, string[]> = Object.create(null) as Record<string, string[]>;
  for (const iss of issues) {
    const key = iss.path.length === 0 ? 'body' : iss.path.map(String).join('.');
    (out[key] ??= []).push(iss.message);
  }
  // Plain object for JSON serialisation.
  return { ...out };
}

/**
 * Per-parse messages (schema-level messages, e.g. the PIN's, take precedence). zod's
 * defaults never include the input value, and neither do these.
 */
function defaultIssueMessage(iss: z.core.$ZodRawIssue): string | undefined {
  if (iss.code === 'invalid_type') {
    if (iss.input === undefined) return 'is required';
    if (iss.expected === 'object' && (iss.path ?? []).length === 0) return 'the body must be a JSON object';
    return `must be ${article(iss.expected)}`;
  }
  return undefined;
}

function article(expected: string): string {
  return /^[aeiou]/.test(expected) ? `an ${expected}` : `a ${expected}`;
}
