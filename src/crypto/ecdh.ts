/**
 * ECDH on NIST P-256 and the session key K (protocol.md "Key Agreement"):
 *
 *   S = (Sx, Sy) = ECDH(c, V) = ECDH(v, C)
 *   K = SHA1(BIG_ENDIAN(Sx, 32))[:16]
 *
 * Uses node:crypto (OpenSSL) because it is fast and constant-time.
 *
 * Where Sx comes from — a library gotcha worth writing down:
 *  - node's `ECDH.computeSecret()` returns exactly the 32-byte big-endian X coordinate of
 *    the shared point, already left-padded with zeros (OpenSSL's ECDH_compute_key). That
 *    is the Sx the protocol hashes. The reference tests include a vector whose Sx starts
 *    with 0x00; ours pass it, so padding is right.
 *  - `@noble/curves` `p256.getSharedSecret()` returns an *encoded point* (33 bytes
 *    compressed by default, 65 uncompressed): Sx is bytes [1..33) of that. Hashing the
 *    whole encoding would yield a different, wrong K.
 *
 * SHA-1 is what the protocol specifies; it only maps a pseudo-random X coordinate to a
 * 128-bit key, so collision resistance is not needed here.
 */
import { createECDH, createHash } from 'node:crypto';
import { VcpError } from '../protocol/errors.js';
import { SIZES } from './types.js';

const CURVE = 'prime256v1';

/** Throws unless `point` is a 65-byte uncompressed P-256 point that lies on the curve. */
export function assertPublicKey(point: Uint8Array, what = 'peer public key'): void {
  if (point.length !== SIZES.publicKey || point[0] !== 0x04) {
    throw invalidPublicKey(what);
  }
  // Validate by using it: OpenSSL rejects off-curve points and the point at infinity.
  // A fixed throwaway scalar keeps this pure (no randomness); nothing secret is derived.
  const probe = createECDH(CURVE);
  probe.setPrivateKey(PROBE_SCALAR);
  try {
    probe.computeSecret(point);
  } catch (cause) {
    throw invalidPublicKey(what, cause);
  }
}

const PROBE_SCALAR = new Uint8Array(32).fill(0x11);

function invalidPublicKey(what: string, cause?: unknown): VcpError {
  return new VcpError(
    'invalid_public_key',
    `The ${what} is not a valid uncompressed P-256 point (65 bytes starting with 0x04, on the curve). ` +
      'Check the key encoding; if it came from the vehicle, start a new handshake.',
    { status: 502, temporary: false, cause },
  );
}

function invalidPrivateKey(cause?: unknown): VcpError {
  return new VcpError(
    'invalid_private_key',
    'The private scalar is not a valid P-256 private key (32 bytes, 0 < d < n). Regenerate or reload the key.',
    { status: 500, cause },
  );
}

function loadScalar(privateScalar: Uint8Array) {
  if (privateScalar.length !== SIZES.scalar) throw invalidPrivateKey();
  const ecdh = createECDH(CURVE);
  try {
    // OpenSSL rejects 0 and scalars ≥ n here.
    ecdh.setPrivateKey(privateScalar);
  } catch (cause) {
    throw invalidPrivateKey(cause);
  }
  return ecdh;
}

/**
 * ECDH: returns Sx, the 32-byte big-endian X coordinate of `d · peer`.
 * Throws `VcpError` `invalid_public_key` / `invalid_private_key`.
 */
export function ecdhSharedX(privateScalar: Uint8Array, peerPoint: Uint8Array): Uint8Array {
  if (peerPoint.length !== SIZES.publicKey || peerPoint[0] !== 0x04) throw invalidPublicKey('peer public key');
  const ecdh = loadScalar(privateScalar);
  let sx: Uint8Array;
  try {
    sx = ecdh.computeSecret(peerPoint);
  } catch (cause) {
    throw invalidPublicKey('peer public key', cause);
  }
  if (sx.length !== SIZES.sharedX) throw invalidPublicKey('peer public key');
  return new Uint8Array(sx.buffer, sx.byteOffset, sx.length);
}

/** The uncompressed public point for a private scalar (vehicle side, key generation in tests). */
export function publicKeyFromScalar(privateScalar: Uint8Array): Uint8Array {
  const pub = loadScalar(privateScalar).getPublicKey();
  return new Uint8Array(pub.buffer, pub.byteOffset, pub.length);
}

/** K = SHA1(Sx)[:16]. */
export function sessionKey(sharedX: Uint8Array): Uint8Array {
  if (sharedX.length !== SIZES.sharedX) {
    throw new VcpError('internal_error', 'ECDH shared secret must be the 32-byte X coordinate', { status: 500 });
  }
  const d = createHash('sha1').update(sharedX).digest();
  return new Uint8Array(d.buffer, d.byteOffset, SIZES.sessionKey).slice();
}

/** Convenience: K from a local private scalar and a peer point. */
export function deriveSessionKey(privateScalar: Uint8Array, peerPoint: Uint8Array): Uint8Array {
  return sessionKey(ecdhSharedX(privateScalar, peerPoint));
}
