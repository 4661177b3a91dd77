/**
 * Types of the command catalogue. See index.ts for what this folder owns.
 */
import type { z } from 'zod';
import type { DomainId } from '../protocol/domains.js';

/** What the dispatcher must do for one validated request. */
export type Plan =
  /** Sign `payload` (an encoded VCSEC.UnsignedMessage or CarServer.Action) for `domain`. */
  | { kind: 'signed'; domain: DomainId; payload: Uint8Array }
  /** Forward the original request body, byte for byte, to the service's REST `command/{name}`. */
  | { kind: 'rest' }
  /** REST `wake_up`; no session is needed. */
  | { kind: 'wake' };

/** Grouping used for the file split, the docs and OpenAPI tags. */
export type Area =
  | 'security'
  | 'access'
  | 'closures'
  | 'charging'
  | 'climate'
  | 'media'
  | 'navigation'
  | 'software'
  | 'schedules'
  | 'vehicle';

/**
 * - `signed`: always a signed protocol message for `domain`.
 * - `rest`: the signed protocol has no message for it; always forwarded to REST.
 * - `wake`: the REST wake_up endpoint.
 * - `mixed`: signed for some parameter values, forwarded for others (see `notes`).
 */
export type Mode = 'signed' | 'rest' | 'wake' | 'mixed';

/** Inputs a builder may need that must not come from ambient globals (tests inject them). */
export interface BuildContext {
  /** Milliseconds since the epoch; used only where the service defaults an id to "now". */
  now: () => number;
}

export interface CommandDef {
  readonly name: string;
  readonly area: Area;
  /** One line for docs and OpenAPI. */
  readonly summary: string;
  /** Validates the JSON body (absent body is validated as `{}`). Unknown fields are ignored. */
  readonly schema: z.ZodType;
  /** Domain of the signed message; null when the command is never signed. */
  readonly domain: DomainId | null;
  readonly mode: Mode;
  /** Only owners / fleet managers may run it (the service documents this). */
  readonly ownerOnly: boolean;
  /** Extra facts for docs and OpenAPI (e.g. which values are forwarded for `mixed`). */
  readonly notes?: string;
  /** Body fields whose values are secrets (PINs, passwords): never log them. */
  readonly secretFields: readonly string[];
  /** Validated body → plan. Pure: no I/O, no clock except `ctx.now`. */
  build(body: unknown, ctx: BuildContext): Plan;
}
