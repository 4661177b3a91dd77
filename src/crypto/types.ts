/**
 * Shared crypto types and the protocol's numeric constants used at the byte level.
 *
 * The numeric values below are protocol facts (signatures.proto / universal_message.proto).
 * They are duplicated here on purpose: TLV metadata, the request hash and the tag inputs
 * are byte-level formats that must not silently change if the generated protobuf module is
 * regenerated with different enum spellings. Tests cross-check them against the generated
 * enums.
 */

/**
 * A client key that can take part in the protocol without handing out its private scalar.
 * Implemented by `src/keys/` (local PEM key); an HSM or cloud KMS can implement it later.
 */
export interface CommandKey {
  /** 65-byte uncompressed SEC1 point (0x04 ‖ X ‖ Y) on NIST P-256. */
  readonly publicKey: Uint8Array;
  /**
   * ECDH with the peer's 65-byte uncompressed point; returns the 32-byte big-endian X
   * coordinate of the shared point (Sx), left-padded with zeros. Throws `VcpError`
   * (`invalid_public_key`) when the peer point is not on the curve.
   */
  sharedSecretX(peer: Uint8Array): Uint8Array;
  /** JWS (Schnorr/P-256) signature over `input`; 96 bytes. Used for telemetry tokens. */
  signJws(input: Uint8Array): Uint8Array;
}

/** Injected wall clock, milliseconds since the Unix epoch (like `Date.now`). */
export type Clock = () => number;

/** Injected randomness: returns `n` fresh random bytes (like `crypto.randomBytes`). */
export type Random = (n: number) => Uint8Array;

/** `Signatures.Tag`: metadata TLV tags. Values are protocol facts. */
export const Tag = {
  SIGNATURE_TYPE: 0,
  DOMAIN: 1,
  PERSONALIZATION: 2,
  EPOCH: 3,
  EXPIRES_AT: 4,
  COUNTER: 5,
  CHALLENGE: 6,
  FLAGS: 7,
  REQUEST_HASH: 8,
  FAULT: 9,
  END: 255,
} as const;

/** `Signatures.SignatureType`. */
export const SignatureType = {
  AES_GCM: 0,
  AES_GCM_PERSONALIZED: 5,
  HMAC: 6,
  HMAC_PERSONALIZED: 8,
  AES_GCM_RESPONSE: 9,
} as const;

/**
 * `UniversalMessage.Flags` are bit *positions*; the wire field `flags` is a mask
 * (`1 << position`). `FLAG_ENCRYPT_RESPONSE` is therefore mask 0x2.
 */
export const FlagBit = {
  USER_COMMAND: 0,
  ENCRYPT_RESPONSE: 1,
} as const;
export const FLAG_ENCRYPT_RESPONSE_MASK = 1 << FlagBit.ENCRYPT_RESPONSE;

/** Domain ids as used in metadata (one byte). Mirrors `UniversalMessage.Domain`. */
export const DomainNum = {
  BROADCAST: 0,
  VEHICLE_SECURITY: 2,
  INFOTAINMENT: 3,
} as const;

/** Sizes fixed by the protocol. */
export const SIZES = {
  publicKey: 65,
  scalar: 32,
  sharedX: 32,
  sessionKey: 16,
  epoch: 16,
  gcmNonce: 12,
  gcmTag: 16,
  hmacTag: 32,
  uuid: 16,
  routingAddress: 16,
  /** Request hash for VCSEC: 1 type byte + first 16 bytes of the tag. */
  vcsecRequestHash: 17,
} as const;

export const UINT32_MAX = 0xffff_ffff;
