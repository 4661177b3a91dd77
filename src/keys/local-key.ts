/**
 * `LocalKey`: the partner's command key held in process memory, implementing `CommandKey`.
 *
 * The private scalar lives only in ES private fields (`#scalar`, `#ecdh`): they are not
 * properties, so `JSON.stringify`, `Object.keys`, spread, structuredClone-by-accident and
 * `util.inspect` cannot reach them. `toJSON` and `util.inspect` show the public key and its
 * fingerprint only. Nothing here logs.
 */
import { createECDH, createHash, createPublicKey, type ECDH } from 'node:crypto';
import { inspect } from 'node:util';
import { VcpError } from '../protocol/errors.js';
import { schnorrSign } from '../crypto/schnorr.js';
import type { CommandKey } from '../crypto/types.js';

const CURVE = 'prime256v1';

/** SHA-256 of the 65-byte uncompressed point, lowercase hex (64 chars). Public; safe to log. */
export function fingerprint(publicKey: Uint8Array): string {
  return createHash('sha256').update(publicKey).digest('hex');
}

/** SPKI PEM ("BEGIN PUBLIC KEY") for a 65-byte uncompressed P-256 point. */
export function publicKeyToPem(publicKey: Uint8Array): string {
  if (publicKey.length !== 65 || publicKey[0] !== 0x04) {
    throw invalidPeer('public key');
  }
  const b = Buffer.from(publicKey);
  const key = createPublicKey({
    key: { kty: 'EC', crv: 'P-256', x: b.subarray(1, 33).toString('base64url'), y: b.subarray(33).toString('base64url') },
    format: 'jwk',
  });
  return key.export({ type: 'spki', format: 'pem' }).toString();
}

function invalidPeer(what: string): VcpError {
  // Same code as src/crypto/ecdh.ts so callers have one thing to branch on.
  return new VcpError(
    'invalid_public_key',
    `The ${what} is not a valid uncompressed P-256 point (65 bytes starting with 0x04, on the curve). ` +
      'Check the key encoding; if it came from the vehicle, start a new handshake.',
    { status: 502, temporary: false },
  );
}

export class LocalKey implements CommandKey {
  readonly #scalar: Uint8Array;
  readonly #ecdh: ECDH;
  readonly #publicKey: Uint8Array;
  readonly #fingerprint: string;
  #publicPem: string | undefined;

  private constructor(scalar: Uint8Array) {
    const ecdh = createECDH(CURVE);
    try {
      // OpenSSL rejects 0 and scalars ≥ n.
      ecdh.setPrivateKey(scalar);
    } catch {
      throw new VcpError(
        'key_corrupt',
        'The private scalar is not a valid P-256 private key (32 bytes, 0 < d < n). ' +
          'Create a new key with `npx vcproxy keygen --out ./keys`.',
        { status: 500 },
      );
    }
    this.#scalar = Uint8Array.from(scalar);
    this.#ecdh = ecdh;
    this.#publicKey = new Uint8Array(ecdh.getPublicKey());
    this.#fingerprint = fingerprint(this.#publicKey);
  }

  /**
   * Builds a key from a raw 32-byte scalar (tests, simulator, future KMS import). Production
   * code should load PEM files with `loadKeyFile`, which also checks permissions. The caller's
   * buffer is copied, so it may be wiped afterwards.
   */
  static fromScalar(scalar: Uint8Array): LocalKey {
    if (scalar.length !== 32) {
      throw new VcpError('key_corrupt', 'A P-256 private scalar is exactly 32 bytes.', { status: 500 });
    }
    return new LocalKey(scalar);
  }

  /** 65-byte uncompressed point. A copy: callers cannot alter the key's identity. */
  get publicKey(): Uint8Array {
    return this.#publicKey.slice();
  }

  /** SHA-256 of the uncompressed point, hex. */
  get fingerprint(): string {
    return this.#fingerprint;
  }

  /** The SPKI PEM partners host at the well-known path and enroll on vehicles. */
  publicKeyPem(): string {
    this.#publicPem ??= publicKeyToPem(this.#publicKey);
    return this.#publicPem;
  }

  /** Lowercase hex of the uncompressed point (what the protocol documents print). */
  publicKeyHex(): string {
    return Buffer.from(this.#publicKey).toString('hex');
  }

  sharedSecretX(peer: Uint8Array): Uint8Array {
    // Only uncompressed points: OpenSSL would also accept compressed ones, but the protocol
    // never sends them and accepting two encodings of one key invites confusion.
    if (peer.length !== 65 || peer[0] !== 0x04) throw invalidPeer('peer public key');
    let sx: Buffer;
    try {
      sx = this.#ecdh.computeSecret(peer);
    } catch {
      throw invalidPeer('peer public key');
    }
    if (sx.length !== 32) throw invalidPeer('peer public key');
    return new Uint8Array(sx);
  }

  signJws(input: Uint8Array): Uint8Array {
    return schnorrSign(this.#scalar, input);
  }

  toJSON(): { type: 'LocalKey'; publicKey: string; fingerprint: string } {
    return { type: 'LocalKey', publicKey: this.publicKeyHex(), fingerprint: this.#fingerprint };
  }

  toString(): string {
    return `LocalKey(${this.#fingerprint.slice(0, 16)})`;
  }

  [inspect.custom](): string {
    return `LocalKey { fingerprint: '${this.#fingerprint.slice(0, 16)}…', publicKey: '${this.publicKeyHex()}' }`;
  }
}
