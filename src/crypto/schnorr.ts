/**
 * Schnorr signatures over NIST P-256 with SHA-256 (RFC 8235 style), as the vehicle protocol
 * uses them for offline, fleet-wide messages (the "Tesla.SS256" JWS algorithm, e.g. telemetry
 * configurations).
 *
 * Why Schnorr and not ECDSA: the partner's P-256 key is already used for ECDH; the protocol
 * re-uses it as a Schnorr key and relies on domain separation of the hashes (ECDH KDF uses
 * SHA-1, this scheme SHA-256). We must therefore never use the command key for ECDSA.
 *
 * Facts followed (from the reference implementation, re-expressed here):
 *  - challenge c = SHA-256( LV(G) ‖ LV(V) ‖ LV(A) ‖ LV(message) ), where LV(x) is a 4-byte
 *    big-endian length followed by x, G/V/A are 65-byte uncompressed points (generator,
 *    public nonce, signer's public key). c is used modulo the group order n.
 *  - nonce v: RFC 6979 deterministic nonce for P-256/SHA-256 over digest = SHA-256(message)
 *    (with h1 = digest mod n), so signing needs no randomness and is reproducible.
 *  - r = v − a·c (mod n); signature = Vx ‖ Vy ‖ r (3 × 32 bytes, no 0x04 prefix).
 *  - verification: V == c·A + r·G.
 *
 * This module is pure math: no files, clock or randomness. Secret-scalar arithmetic uses JS
 * bigints, which are not constant-time; the point multiplication by the nonce uses noble's
 * constant-time `multiply`. node:crypto offers no Schnorr primitive, so this is the best
 * available in-process; an HSM-backed `CommandKey` can replace it.
 */
import { createHash, createHmac } from 'node:crypto';
import { p256 } from '@noble/curves/nist.js';

export const SCALAR_LENGTH = 32;
export const SIGNATURE_LENGTH = 3 * SCALAR_LENGTH;
export const PUBLIC_KEY_LENGTH = 65;

const Point = p256.Point;
const N: bigint = Point.Fn.ORDER;
const GENERATOR_BYTES: Uint8Array = Point.BASE.toBytes(false);

function bytesToBigInt(b: Uint8Array): bigint {
  let hex = '';
  for (const x of b) hex += x.toString(16).padStart(2, '0');
  return hex.length === 0 ? 0n : BigInt('0x' + hex);
}

function bigIntTo32(x: bigint): Uint8Array {
  const hex = x.toString(16).padStart(64, '0');
  if (hex.length !== 64) throw new RangeError('scalar does not fit in 32 bytes');
  return Uint8Array.from(Buffer.from(hex, 'hex'));
}

function sha256(...parts: Uint8Array[]): Uint8Array {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return new Uint8Array(h.digest());
}

function hmacSha256(key: Uint8Array, ...parts: Uint8Array[]): Uint8Array {
  const h = createHmac('sha256', key);
  for (const p of parts) h.update(p);
  return new Uint8Array(h.digest());
}

function lengthValue(b: Uint8Array): Uint8Array[] {
  const len = new Uint8Array(4);
  new DataView(len.buffer).setUint32(0, b.length, false);
  return [len, b];
}

/** The challenge hash c (32 bytes, not yet reduced mod n). */
export function schnorrChallenge(publicNonce: Uint8Array, signerPublicKey: Uint8Array, message: Uint8Array): Uint8Array {
  return sha256(
    ...lengthValue(GENERATOR_BYTES),
    ...lengthValue(publicNonce),
    ...lengthValue(signerPublicKey),
    ...lengthValue(message),
  );
}

/**
 * RFC 6979 §3.2 nonce for P-256 / SHA-256 (hlen = qlen = 256, so one HMAC output is one
 * candidate). `scalar` is the 32-byte private key, `digest` = SHA-256(message).
 */
export function deterministicNonce(scalar: Uint8Array, digest: Uint8Array): Uint8Array {
  if (scalar.length !== SCALAR_LENGTH || digest.length !== 32) {
    throw new RangeError('deterministicNonce needs a 32-byte scalar and a 32-byte digest');
  }
  const h1 = bigIntTo32(bytesToBigInt(digest) % N); // bits2octets
  let v: Uint8Array = new Uint8Array(32).fill(0x01);
  let k: Uint8Array = new Uint8Array(32).fill(0x00);
  k = hmacSha256(k, v, Uint8Array.of(0x00), scalar, h1);
  v = hmacSha256(k, v);
  k = hmacSha256(k, v, Uint8Array.of(0x01), scalar, h1);
  v = hmacSha256(k, v);
  // Rejection sampling: a candidate ≥ n (or 0) happens with probability ~2^-32; the loop is
  // bounded so a broken HMAC can never spin forever.
  for (let attempt = 0; attempt < 1024; attempt++) {
    v = hmacSha256(k, v);
    const t = bytesToBigInt(v);
    if (t > 0n && t < N) return v;
    k = hmacSha256(k, v, Uint8Array.of(0x00));
    v = hmacSha256(k, v);
  }
  throw new Error('deterministicNonce: no valid candidate (unreachable in practice)');
}

/** Parses a 32-byte scalar in [1, n−1]. */
export function parseScalar(scalar: Uint8Array): bigint {
  if (scalar.length !== SCALAR_LENGTH) throw new RangeError('private scalar must be 32 bytes');
  const a = bytesToBigInt(scalar);
  if (a <= 0n || a >= N) throw new RangeError('private scalar is out of range for P-256');
  return a;
}

/** The 65-byte uncompressed public point of a 32-byte private scalar. */
export function publicKeyFromScalar(scalar: Uint8Array): Uint8Array {
  return Point.BASE.multiply(parseScalar(scalar)).toBytes(false);
}

/**
 * True if `publicKey` is a 65-byte uncompressed point on P-256 (not the identity).
 * Compressed points are refused: the protocol always carries uncompressed keys.
 */
export function isValidPublicKey(publicKey: Uint8Array): boolean {
  if (publicKey.length !== PUBLIC_KEY_LENGTH || publicKey[0] !== 0x04) return false;
  try {
    const p = Point.fromBytes(publicKey);
    p.assertValidity();
    return !p.is0();
  } catch {
    return false;
  }
}

/** Signs `message` with the private scalar; returns Vx ‖ Vy ‖ r (96 bytes). Deterministic. */
export function schnorrSign(scalar: Uint8Array, message: Uint8Array): Uint8Array {
  const a = parseScalar(scalar);
  const publicKey = Point.BASE.multiply(a).toBytes(false);
  const nonceBytes = deterministicNonce(scalar, sha256(message));
  const v = bytesToBigInt(nonceBytes);
  const publicNonce = Point.BASE.multiply(v).toBytes(false);
  const c = bytesToBigInt(schnorrChallenge(publicNonce, publicKey, message)) % N;
  const r = (((v - ((a * c) % N)) % N) + N) % N;
  const sig = new Uint8Array(SIGNATURE_LENGTH);
  sig.set(publicNonce.subarray(1), 0);
  sig.set(bigIntTo32(r), 2 * SCALAR_LENGTH);
  return sig;
}

export type SchnorrVerdict = 'valid' | 'invalid_signature' | 'invalid_public_key';

/**
 * Checks V == c·A + r·G. Written independently of `schnorrSign` (it never sees a scalar or
 * nonce) so tests can cross-check the two. Non-canonical r (≥ n) is refused so a signature
 * has exactly one encoding.
 */
export function schnorrVerify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): SchnorrVerdict {
  if (!isValidPublicKey(publicKey)) return 'invalid_public_key';
  if (signature.length !== SIGNATURE_LENGTH) return 'invalid_signature';
  const A = Point.fromBytes(publicKey);
  const r = bytesToBigInt(signature.subarray(2 * SCALAR_LENGTH));
  if (r >= N) return 'invalid_signature';
  const claimedNonce = new Uint8Array(PUBLIC_KEY_LENGTH);
  claimedNonce[0] = 0x04;
  claimedNonce.set(signature.subarray(0, 2 * SCALAR_LENGTH), 1);
  const c = bytesToBigInt(schnorrChallenge(claimedNonce, publicKey, message)) % N;
  // Public scalars only, so the variable-time multiplications are fine here.
  const computed = A.multiplyUnsafe(c).add(Point.BASE.multiplyUnsafe(r));
  if (computed.is0()) return 'invalid_signature';
  const bytes = computed.toBytes(false);
  let diff = 0;
  for (let i = 0; i < PUBLIC_KEY_LENGTH; i++) diff |= (bytes[i] ?? 0) ^ (claimedNonce[i] ?? 0);
  return diff === 0 ? 'valid' : 'invalid_signature';
}
