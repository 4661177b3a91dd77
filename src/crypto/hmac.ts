/**
 * Key derivation, metadata strings, HMAC tags, AES-GCM and the request hash — the
 * symmetric half of the protocol, shared by the client `Session` and the vehicle-side
 * verifier so both ends compute exactly the same bytes.
 *
 *   SESSION_INFO_KEY = HMAC-SHA256(K, "session info")
 *   K'               = HMAC-SHA256(K, "authenticated command")
 *   session-info tag = HMAC-SHA256(SESSION_INFO_KEY, M(HMAC, VIN, challenge) ‖ sessionInfo)
 *   HMAC command tag = HMAC-SHA256(K', M(HMAC_PERSONALIZED, domain, VIN, epoch, exp, ctr[, flags]) ‖ P)
 *   AES-GCM command  = AES-128-GCM(K, nonce, P, AAD = SHA256(M(AES_GCM_PERSONALIZED, …)))
 *   AES-GCM response = AES-128-GCM(K, nonce, P, AAD = SHA256(M(AES_GCM_RESPONSE, domain, VIN,
 *                                  counter, flags, requestHash, fault)))
 *
 * `M(...)` always ends with the 0xFF terminator (see tlv.ts).
 *
 * Security notes:
 *  - Tags are compared with `timingSafeEqual` after a length check: a byte-by-byte compare
 *    leaks how many leading bytes of a forged tag were right.
 *  - AES-GCM decryption pins the tag length to 16 bytes. node otherwise accepts truncated
 *    tags (down to 4 bytes) in `setAuthTag`, which would make forgeries cheap.
 *  - Derived keys are computed once per session (`SessionKeys`), not per command.
 */
import * as nodeCrypto from 'node:crypto';
import { createCipheriv, createDecipheriv, createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { VcpError } from '../protocol/errors.js';
import { MetadataBuilder } from './tlv.js';
import { DomainNum, SignatureType, SIZES, Tag } from './types.js';

export const LABEL_SESSION_INFO = 'session info';
export const LABEL_AUTHENTICATED_COMMAND = 'authenticated command';

const te = new TextEncoder();

/** VINs travel as their ASCII bytes in metadata (TAG_PERSONALIZATION). */
export function vinBytes(vin: string): Uint8Array {
  return te.encode(vin);
}

function u8(b: Buffer): Uint8Array {
  return new Uint8Array(b.buffer, b.byteOffset, b.length);
}

export function hmacSha256(key: Uint8Array, ...parts: Uint8Array[]): Uint8Array {
  const h = createHmac('sha256', key);
  for (const p of parts) h.update(p);
  return u8(h.digest());
}

/**
 * node's one-shot `crypto.hash` (Node ≥ 20.12): about a third cheaper than a Hash object for
 * the short inputs hashed per command; feature-detected because `engines` allows older 20.x.
 */
const oneShotHash = (nodeCrypto as { hash?: (algorithm: string, data: Uint8Array, encoding: 'buffer') => Buffer }).hash;

export function sha256(...parts: Uint8Array[]): Uint8Array {
  if (parts.length === 1 && oneShotHash) return u8(oneShotHash('sha256', parts[0]!, 'buffer'));
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return u8(h.digest());
}

/** Constant-time equality for MAC tags (length is not secret). */
export function tagsEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.length > 0 && timingSafeEqual(a, b);
}

// ---------------------------------------------------------------------------------------
// Metadata strings

/** The metadata builder plus the VIN item (its ASCII bytes, written without an encoder). */
class VinMetadata extends MetadataBuilder {
  vin(vin: string | Uint8Array): this {
    return typeof vin === 'string' ? this.addString(Tag.PERSONALIZATION, vin) : this.add(Tag.PERSONALIZATION, vin);
  }
}

/** M for the session-info tag: signature type HMAC, VIN, challenge (the request UUID). */
export function sessionInfoMetadata(vin: string | Uint8Array, challenge: Uint8Array): Uint8Array {
  return new VinMetadata()
    .addByte(Tag.SIGNATURE_TYPE, SignatureType.HMAC)
    .vin(vin)
    .add(Tag.CHALLENGE, challenge)
    .finish();
}

export interface CommandMetadataFields {
  /** `SignatureType.HMAC_PERSONALIZED` or `SignatureType.AES_GCM_PERSONALIZED`. */
  signatureType: number;
  domain: number;
  vin: string | Uint8Array;
  epoch: Uint8Array;
  expiresAt: number;
  counter: number;
  /** Included only when non-zero (backwards compatibility; still authenticated when set). */
  flags: number;
}

/** M for an authenticated command. */
export function commandMetadata(f: CommandMetadataFields): Uint8Array {
  const b = new VinMetadata()
    .addByte(Tag.SIGNATURE_TYPE, f.signatureType)
    .addByte(Tag.DOMAIN, f.domain)
    .vin(f.vin)
    .add(Tag.EPOCH, f.epoch)
    .addUint32(Tag.EXPIRES_AT, f.expiresAt)
    .addUint32(Tag.COUNTER, f.counter);
  if (f.flags !== 0) b.addUint32(Tag.FLAGS, f.flags);
  return b.finish();
}

export interface ResponseMetadataFields {
  /** The responding domain (the response's from_destination.domain). */
  domain: number;
  vin: string | Uint8Array;
  counter: number;
  /** The response's flags — always included, even when zero. */
  flags: number;
  requestHash: Uint8Array;
  /** `MessageFault_E` of the response, as uint32. */
  fault: number;
}

/** M for an AES-GCM-encrypted response. */
export function responseMetadata(f: ResponseMetadataFields): Uint8Array {
  return new VinMetadata()
    .addByte(Tag.SIGNATURE_TYPE, SignatureType.AES_GCM_RESPONSE)
    .addByte(Tag.DOMAIN, f.domain)
    .vin(f.vin)
    .addUint32(Tag.COUNTER, f.counter)
    .addUint32(Tag.FLAGS, f.flags)
    .add(Tag.REQUEST_HASH, f.requestHash)
    .addUint32(Tag.FAULT, f.fault)
    .finish();
}

/**
 * Request hash: signature-type byte ‖ request tag. VCSEC (memory-constrained) truncates it
 * to 17 bytes; this only shortens HMAC tags since GCM tags are already 16 bytes.
 */
export function requestHash(signatureType: number, tag: Uint8Array, domain: number): Uint8Array {
  const body = domain === DomainNum.VEHICLE_SECURITY ? tag.subarray(0, SIZES.vcsecRequestHash - 1) : tag;
  const out = new Uint8Array(1 + body.length);
  out[0] = signatureType;
  out.set(body, 1);
  return out;
}

// ---------------------------------------------------------------------------------------
// AES-128-GCM with the protocol's AAD = SHA256(metadata)

export interface Sealed {
  ciphertext: Uint8Array;
  tag: Uint8Array;
}

function assertNonce(nonce: Uint8Array): void {
  if (nonce.length !== SIZES.gcmNonce) {
    throw new VcpError('internal_error', 'AES-GCM nonces must be 12 bytes', { status: 500 });
  }
}

export function gcmEncrypt(key: Uint8Array, nonce: Uint8Array, plaintext: Uint8Array, metadata: Uint8Array): Sealed {
  assertNonce(nonce);
  const c = createCipheriv('aes-128-gcm', key, nonce, { authTagLength: SIZES.gcmTag });
  c.setAAD(sha256(metadata));
  const ct = Buffer.concat([c.update(plaintext), c.final()]);
  return { ciphertext: u8(ct), tag: u8(c.getAuthTag()) };
}

/** Returns the plaintext, or `null` when authentication fails (wrong key/AAD/tag/nonce). */
export function gcmDecrypt(
  key: Uint8Array,
  nonce: Uint8Array,
  ciphertext: Uint8Array,
  tag: Uint8Array,
  metadata: Uint8Array,
): Uint8Array | null {
  if (nonce.length !== SIZES.gcmNonce || tag.length !== SIZES.gcmTag) return null;
  try {
    const d = createDecipheriv('aes-128-gcm', key, nonce, { authTagLength: SIZES.gcmTag });
    d.setAAD(sha256(metadata));
    d.setAuthTag(tag);
    const plain = d.update(ciphertext);
    // GCM has no padding: final() yields no bytes; it is where a bad tag throws.
    d.final();
    return u8(plain);
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------------------
// Per-session derived keys

/**
 * K plus the two HMAC keys derived from it, computed once. All three live in one 80-byte
 * buffer to keep per-session memory small (one allocation instead of three).
 */
export class SessionKeys {
  // The storage as (ArrayBuffer, offset), not a Uint8Array: a typed-array view is a ~100-byte
  // heap object, kept for the life of every cached session; short-lived views made per use
  // cost nothing lasting (and the accessors below made one per use anyway).
  private readonly store: ArrayBufferLike;
  private readonly at: number;

  private constructor(store: ArrayBufferLike, at: number) {
    this.store = store;
    this.at = at;
  }

  /**
   * `into`: optional storage (≥ 80 bytes, used from its offset 0) so a caller can keep the
   * keys in one allocation with its other per-session bytes (see Session, which reaches
   * those through `view`).
   */
  static fromSharedKey(k: Uint8Array, into?: Uint8Array): SessionKeys {
    if (k.length !== SIZES.sessionKey) {
      throw new VcpError('internal_error', 'session key K must be 16 bytes', { status: 500 });
    }
    if (into && into.length < 80) throw new VcpError('internal_error', 'session key storage must hold 80 bytes', { status: 500 });
    const buf = into ?? new Uint8Array(16 + 32 + 32);
    buf.set(k, 0);
    buf.set(hmacSha256(k, te.encode(LABEL_SESSION_INFO)), 16);
    buf.set(hmacSha256(k, te.encode(LABEL_AUTHENTICATED_COMMAND)), 48);
    return new SessionKeys(buf.buffer, buf.byteOffset);
  }

  /** `length` bytes at `offset` of the storage given to `fromSharedKey` (0..79 are the keys). */
  view(offset: number, length: number): Uint8Array {
    return new Uint8Array(this.store, this.at + offset, length);
  }

  /** K, the AES-128-GCM key. */
  get k(): Uint8Array {
    return this.view(0, 16);
  }
  /** HMAC-SHA256(K, "session info"). */
  get sessionInfoKey(): Uint8Array {
    return this.view(16, 32);
  }
  /** K' = HMAC-SHA256(K, "authenticated command"). */
  get commandKey(): Uint8Array {
    return this.view(48, 32);
  }

  sessionInfoTag(vin: string | Uint8Array, challenge: Uint8Array, sessionInfo: Uint8Array): Uint8Array {
    return hmacSha256(this.sessionInfoKey, sessionInfoMetadata(vin, challenge), sessionInfo);
  }

  verifySessionInfoTag(vin: string | Uint8Array, challenge: Uint8Array, sessionInfo: Uint8Array, tag: Uint8Array): boolean {
    return tagsEqual(this.sessionInfoTag(vin, challenge, sessionInfo), tag);
  }

  /** HMAC-personalized command tag over `metadata ‖ payload`. */
  commandTag(metadata: Uint8Array, payload: Uint8Array): Uint8Array {
    return hmacSha256(this.commandKey, metadata, payload);
  }

  /** Constant-time check of an HMAC-personalized command tag. */
  verifyCommandTag(metadata: Uint8Array, payload: Uint8Array, tag: Uint8Array): boolean {
    return tagsEqual(this.commandTag(metadata, payload), tag);
  }

  encrypt(nonce: Uint8Array, plaintext: Uint8Array, metadata: Uint8Array): Sealed {
    return gcmEncrypt(this.k, nonce, plaintext, metadata);
  }

  decrypt(nonce: Uint8Array, ciphertext: Uint8Array, tag: Uint8Array, metadata: Uint8Array): Uint8Array | null {
    return gcmDecrypt(this.k, nonce, ciphertext, tag, metadata);
  }
}
