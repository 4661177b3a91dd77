/**
 * "Tesla.SS256" JWS: compact JWS whose signature is the protocol's Schnorr/P-256 signature
 * (see src/crypto/schnorr.ts). Used to sign fleet-telemetry configurations
 * (`fleet_telemetry_config` → `fleet_telemetry_config_jws`).
 *
 * Facts followed (from the reference implementation):
 *  - header `{"alg":"Tesla.SS256","typ":"JWT"}`;
 *  - claims = the caller's object with `iss` and `aud` overwritten: `iss` is the *standard,
 *    padded* base64 of the signer's 65-byte uncompressed public key, `aud` is
 *    `com.tesla.fleet.<app>` (fleet-wide) or `com.tesla.vehicle.<VIN>.<app>`; telemetry
 *    uses app `TelemetryClient`;
 *  - segments are unpadded base64url; the signature (96 bytes) covers the ASCII
 *    `header.payload`.
 *
 * JSON is serialized the way the reference (Go) does — object keys sorted by UTF-8 bytes,
 * compact, `<` `>` `&` U+2028 U+2029 escaped — so our tokens are byte-identical to the
 * reference's for the same key and claims. Verifiers don't need that (they check the bytes
 * they got), but it makes signatures reproducible and comparable.
 *
 * A signed token is not a bearer credential, but it is a signed payload: it is never put in
 * error messages or logs.
 */
import { VcpError } from '../protocol/errors.js';
import { schnorrVerify } from '../crypto/schnorr.js';
import type { CommandKey } from '../crypto/types.js';

export const JWS_ALG = 'Tesla.SS256';
export const TELEMETRY_APP = 'TelemetryClient';
export const TELEMETRY_AUDIENCE = `com.tesla.fleet.${TELEMETRY_APP}`;

export function fleetAudience(app: string): string {
  return `com.tesla.fleet.${app}`;
}

export function vehicleAudience(vin: string, app: string): string {
  return `com.tesla.vehicle.${vin}.${app}`;
}

const MAX_DEPTH = 64;

function badClaims(msg: string): VcpError {
  return new VcpError('invalid_request', msg, { status: 400 });
}

const utf8 = new TextEncoder();

function compareUtf8(a: string, b: string): number {
  return Buffer.compare(Buffer.from(utf8.encode(a)), Buffer.from(utf8.encode(b)));
}

function goString(s: string): string {
  return JSON.stringify(s).replace(/[<>&\u2028\u2029]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
}

/** Compact JSON with sorted keys and Go's HTML-safe escaping. Exported for tests. */
export function canonicalJson(value: unknown, depth = 0): string {
  if (depth > MAX_DEPTH) throw badClaims(`The configuration is nested deeper than ${MAX_DEPTH} levels; flatten it.`);
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value)) throw badClaims('The configuration contains a non-finite number; use finite numbers only.');
      return JSON.stringify(value);
    case 'string':
      return goString(value);
    case 'object': {
      if (Array.isArray(value)) return '[' + value.map((v) => canonicalJson(v ?? null, depth + 1)).join(',') + ']';
      const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
      entries.sort(([a], [b]) => compareUtf8(a, b));
      return '{' + entries.map(([k, v]) => goString(k) + ':' + canonicalJson(v, depth + 1)).join(',') + '}';
    }
    default:
      throw badClaims(`The configuration contains a value of type ${typeof value}, which JSON cannot carry.`);
  }
}

function b64url(bytes: Uint8Array | string): string {
  return Buffer.from(typeof bytes === 'string' ? utf8.encode(bytes) : bytes).toString('base64url');
}

/**
 * Signs `claims` for `audience` (overwriting `iss` and `aud`, as the reference does).
 * Deterministic: the same key and claims always give the same token.
 */
export function signJwsClaims(key: CommandKey, claims: Record<string, unknown>, audience: string): string {
  if (claims === null || typeof claims !== 'object' || Array.isArray(claims)) {
    throw badClaims('The configuration must be a JSON object.');
  }
  const body = { ...claims, iss: Buffer.from(key.publicKey).toString('base64'), aud: audience };
  const signingInput = b64url(canonicalJson({ alg: JWS_ALG, typ: 'JWT' })) + '.' + b64url(canonicalJson(body));
  const signature = key.signJws(utf8.encode(signingInput));
  if (signature.length !== 96) {
    throw new VcpError('internal_error', 'The command key returned a signature of the wrong size.', { status: 500 });
  }
  return signingInput + '.' + b64url(signature);
}

/**
 * Signs a fleet-telemetry configuration for all vehicles that trust `key` (audience
 * `com.tesla.fleet.TelemetryClient`). `iss`/`aud` in `config` are overwritten; `opts.vin`
 * restricts the token to one vehicle instead.
 */
export function signTelemetryConfig(key: CommandKey, config: object, opts: { vin?: string } = {}): string {
  const audience = opts.vin === undefined ? TELEMETRY_AUDIENCE : vehicleAudience(opts.vin, TELEMETRY_APP);
  return signJwsClaims(key, config as Record<string, unknown>, audience);
}

export interface VerifiedJws {
  header: Record<string, unknown>;
  claims: Record<string, unknown>;
  /** The signer's 65-byte public key (decoded `iss`). The caller decides whether it is trusted. */
  issuer: Uint8Array;
}

export interface VerifyJwsOptions {
  /** Require this signer (65-byte point). Without it, any issuer whose signature checks out passes. */
  publicKey?: Uint8Array;
  /** Required `aud`; `null` skips the check. Default: the telemetry audience. */
  audience?: string | null;
  /** If given, `exp`/`nbf` claims (seconds) are enforced against this clock (ms). */
  now?: () => number;
}

function invalidJws(why: string, code = 'invalid_jws'): VcpError {
  return new VcpError(code, `Invalid signed token: ${why}. Re-sign the configuration with the command key.`, {
    status: 400,
  });
}

/** Strict base64url: alphabet only, no padding, and the canonical encoding (no stray bits). */
function decodeSegment(seg: string, what: string): Buffer {
  if (!/^[A-Za-z0-9_-]*$/.test(seg) || seg.length % 4 === 1) throw invalidJws(`${what} is not base64url`);
  const bytes = Buffer.from(seg, 'base64url');
  if (bytes.toString('base64url') !== seg) throw invalidJws(`${what} is not canonical base64url`);
  return bytes;
}

function parseObject(bytes: Buffer, what: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    throw invalidJws(`${what} is not JSON`);
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw invalidJws(`${what} is not a JSON object`);
  return v as Record<string, unknown>;
}

/**
 * Verifies a Tesla.SS256 token. Independent of the signing path: it parses the token and runs
 * the Schnorr verification equation on the bytes received.
 */
export function verifyJws(token: string, opts: VerifyJwsOptions = {}): VerifiedJws {
  const parts = token.split('.');
  if (parts.length !== 3) throw invalidJws('expected three dot-separated segments');
  const [h, p, s] = parts as [string, string, string];
  const header = parseObject(decodeSegment(h, 'header'), 'header');
  if (header.alg !== JWS_ALG) throw invalidJws(`algorithm must be ${JWS_ALG}`);
  const claims = parseObject(decodeSegment(p, 'payload'), 'payload');
  const signature = decodeSegment(s, 'signature');
  if (typeof claims.iss !== 'string' || !/^[A-Za-z0-9+/]+={0,2}$/.test(claims.iss)) {
    throw invalidJws('issuer (iss) must be the base64 public key');
  }
  const issuer = Buffer.from(claims.iss, 'base64');
  if (issuer.toString('base64') !== claims.iss || issuer.length !== 65) {
    throw invalidJws('issuer (iss) must be the base64 of a 65-byte public key');
  }
  if (opts.publicKey && !Buffer.from(opts.publicKey).equals(issuer)) {
    throw invalidJws('signed by a different key than expected', 'jws_untrusted_issuer');
  }
  const verdict = schnorrVerify(new Uint8Array(issuer), utf8.encode(`${h}.${p}`), new Uint8Array(signature));
  if (verdict === 'invalid_public_key') throw invalidJws('issuer (iss) is not a valid P-256 point');
  if (verdict !== 'valid') throw invalidJws('signature does not verify');
  const audience = opts.audience === undefined ? TELEMETRY_AUDIENCE : opts.audience;
  if (audience !== null && claims.aud !== audience) throw invalidJws(`audience (aud) must be ${audience}`);
  if (opts.now) {
    const nowSec = opts.now() / 1000;
    if (typeof claims.exp === 'number' && nowSec >= claims.exp) throw invalidJws('token has expired (exp)', 'jws_expired');
    if (typeof claims.nbf === 'number' && nowSec < claims.nbf) throw invalidJws('token is not valid yet (nbf)', 'jws_not_yet_valid');
  }
  return { header, claims, issuer: new Uint8Array(issuer) };
}

/** Verifies a telemetry-config token (audience `com.tesla.fleet.TelemetryClient`); returns its claims. */
export function verifyTelemetryJws(token: string, publicKey?: Uint8Array, opts: Omit<VerifyJwsOptions, 'publicKey'> = {}): Record<string, unknown> {
  return verifyJws(token, { ...opts, ...(publicKey ? { publicKey } : {}) }).claims;
}
