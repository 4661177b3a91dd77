/**
 * One vehicle domain (VCSEC or infotainment) as the vehicle sees it: its own P-256 key,
 * a random 16-byte epoch chosen at boot, a clock counting seconds since boot (plus an
 * injectable skew for fault injection), and per-signer anti-replay state.
 *
 * The cryptographic checks are `DomainVerifier` from src/crypto/verifier.ts (domain →
 * enrolled signer → epoch → expiry → tag over metadata built from the vehicle's OWN VIN,
 * domain and epoch → counter: strict for VCSEC, sliding window for infotainment). This
 * wrapper adds what a vehicle has around them: reboot (new epoch), clock skew, and the
 * firmware rule that only 2024.38+ honours FLAG_ENCRYPT_RESPONSE.
 */
import { toHex } from '../crypto/bytes.js';
import { publicKeyFromScalar } from '../crypto/ecdh.js';
import { DomainVerifier } from '../crypto/verifier.js';
import { UniversalMessage } from '../protocol/pb.js';
import type { RoleName } from './types.js';

export const DOMAIN_VCSEC = 2;
export const DOMAIN_INFOTAINMENT = 3;
export type SimDomainId = typeof DOMAIN_VCSEC | typeof DOMAIN_INFOTAINMENT;

/** MessageFault_E wire values (re-exported from the generated enum for readability). */
const F = UniversalMessage.MessageFault_E;
export const Fault = {
  NONE: F.MESSAGEFAULT_ERROR_NONE,
  UNKNOWN_KEY_ID: F.MESSAGEFAULT_ERROR_UNKNOWN_KEY_ID,
  INVALID_SIGNATURE: F.MESSAGEFAULT_ERROR_INVALID_SIGNATURE,
  INVALID_TOKEN_OR_COUNTER: F.MESSAGEFAULT_ERROR_INVALID_TOKEN_OR_COUNTER,
  INSUFFICIENT_PRIVILEGES: F.MESSAGEFAULT_ERROR_INSUFFICIENT_PRIVILEGES,
  INVALID_DOMAINS: F.MESSAGEFAULT_ERROR_INVALID_DOMAINS,
  INVALID_COMMAND: F.MESSAGEFAULT_ERROR_INVALID_COMMAND,
  DECODING: F.MESSAGEFAULT_ERROR_DECODING,
  BAD_PARAMETER: F.MESSAGEFAULT_ERROR_BAD_PARAMETER,
  INCORRECT_EPOCH: F.MESSAGEFAULT_ERROR_INCORRECT_EPOCH,
  IV_INCORRECT_LENGTH: F.MESSAGEFAULT_ERROR_IV_INCORRECT_LENGTH,
  TIME_EXPIRED: F.MESSAGEFAULT_ERROR_TIME_EXPIRED,
  TIME_TO_LIVE_TOO_LONG: F.MESSAGEFAULT_ERROR_TIME_TO_LIVE_TOO_LONG,
  REMOTE_ACCESS_DISABLED: F.MESSAGEFAULT_ERROR_REMOTE_ACCESS_DISABLED,
} as const;

export interface Enrolled {
  publicKey: Uint8Array;
  role: RoleName;
}

export interface DomainOptions {
  vin: string;
  domain: SimDomainId;
  now: () => number;
  random: (n: number) => Uint8Array;
  lookupKey: (publicKeyHex: string) => Enrolled | undefined;
}

export class SimDomain {
  readonly domain: SimDomainId;
  readonly verifier: DomainVerifier<Enrolled>;
  /** Seconds added to this domain's clock (fault injection). */
  skewSec = 0;
  private readonly opts: DomainOptions;

  constructor(opts: DomainOptions) {
    this.opts = opts;
    this.domain = opts.domain;
    this.verifier = new DomainVerifier<Enrolled>({
      privateScalar: newScalar(opts.random),
      domain: opts.domain,
      vin: opts.vin,
      // The skew is read on every call so /_sim/skew_clock takes effect immediately.
      now: () => opts.now() + this.skewSec * 1000,
      random: opts.random,
      lookup: (pub) => opts.lookupKey(toHex(pub)),
      // Real VCSEC usually omits request_uuid in its answers (memory constraints);
      // clients must not depend on it there.
      echoRequestUuid: opts.domain !== DOMAIN_VCSEC,
    });
  }

  get epoch(): Uint8Array {
    return this.verifier.epoch;
  }

  /** A reboot: new epoch, clock restarts at 0, anti-replay state reset. */
  reboot(): void {
    this.verifier.rotateEpoch();
  }

  clock(): number {
    return this.verifier.clockTime();
  }

  counterFor(pub: Uint8Array): number {
    return this.verifier.counterFor(pub);
  }

  /** Diagnostic view; never includes private material. */
  describe(): Record<string, unknown> {
    return {
      domain: this.domain === DOMAIN_VCSEC ? 'vcsec' : 'infotainment',
      epoch: toHex(this.epoch),
      clock: this.clock(),
      skew_sec: this.skewSec,
      public_key: toHex(this.verifier.publicKey),
    };
  }
}

/** A valid P-256 scalar from the injected random source (retry on the rare out-of-range draw). */
function newScalar(random: (n: number) => Uint8Array): Uint8Array {
  for (let i = 0; i < 8; i++) {
    const s = random(32).slice();
    try {
      publicKeyFromScalar(s);
      return s;
    } catch {
      /* out of range: draw again */
    }
  }
  throw new Error('random source did not yield a valid P-256 scalar');
}
