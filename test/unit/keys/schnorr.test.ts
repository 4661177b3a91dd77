import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { p256 } from '@noble/curves/nist.js';
import { describe, expect, it } from 'vitest';
import {
  deterministicNonce,
  isValidPublicKey,
  publicKeyFromScalar,
  schnorrChallenge,
  schnorrSign,
  schnorrVerify,
} from '../../../src/crypto/schnorr.js';
import vectors from './vectors/schnorr-p256.json' with { type: 'json' };

const h = (s: string) => new Uint8Array(Buffer.from(s, 'hex'));
const utf8 = (s: string) => new TextEncoder().encode(s);
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const sha256 = (b: Uint8Array) => new Uint8Array(createHash('sha256').update(b).digest());
const N = p256.Point.Fn.ORDER;

describe('RFC 6979 deterministic nonce (published vectors)', () => {
  for (const v of vectors.deterministicNonce) {
    it(v.name, () => {
      const digest = 'digest' in v && v.digest ? h(v.digest) : sha256(utf8((v as { messageUtf8: string }).messageUtf8));
      expect(hex(deterministicNonce(h(v.scalar), digest))).toBe(v.nonce);
    });
  }
});

describe('Schnorr/P-256 signature (published vectors)', () => {
  for (const v of vectors.sign) {
    it(`${v.name}: sign reproduces it, verify accepts it`, () => {
      const msg = utf8(v.messageUtf8);
      expect(hex(schnorrSign(h(v.scalar), msg))).toBe(v.signature);
      expect(schnorrVerify(publicKeyFromScalar(h(v.scalar)), msg, h(v.signature))).toBe('valid');
    });
  }

  const v = vectors.sign[0]!;
  const pub = () => publicKeyFromScalar(h(v.scalar));
  const msg = () => utf8(v.messageUtf8);
  const sig = () => h(v.signature);

  it('wrong message', () => {
    const m = msg();
    m[0]! ^= 1;
    expect(schnorrVerify(pub(), m, sig())).toBe('invalid_signature');
  });

  it('wrong public key', () => {
    const other = new Uint8Array(32);
    other[0] = 4;
    expect(schnorrVerify(publicKeyFromScalar(other), msg(), sig())).toBe('invalid_signature');
  });

  it('nonce point not on the curve (x or y flipped)', () => {
    for (const i of [0, 32]) {
      const s = sig();
      s[i]! ^= 1;
      expect(schnorrVerify(pub(), msg(), s)).toBe('invalid_signature');
    }
  });

  it('r flipped, r ≥ n, truncated or extended signature', () => {
    const s = sig();
    s[95]! ^= 1;
    expect(schnorrVerify(pub(), msg(), s)).toBe('invalid_signature');
    // Non-canonical r (≥ n) must be a clean verdict, never an exception from the curve library.
    for (const r of [N, N + 1n, 2n ** 256n - 1n]) {
      const s2 = sig();
      s2.set(h(r.toString(16).padStart(64, '0')), 64);
      expect(schnorrVerify(pub(), msg(), s2)).toBe('invalid_signature');
    }
    expect(schnorrVerify(pub(), msg(), sig().subarray(0, 95))).toBe('invalid_signature');
    expect(schnorrVerify(pub(), msg(), new Uint8Array([...sig(), 0]))).toBe('invalid_signature');
  });

  it('public key not on the curve, zero point, compressed', () => {
    const p = pub();
    p[0]! ^= 1;
    expect(schnorrVerify(p, msg(), sig())).toBe('invalid_public_key');
    const zero = new Uint8Array(65);
    zero[0] = 4;
    expect(schnorrVerify(zero, msg(), sig())).toBe('invalid_public_key');
    const q = pub();
    expect(isValidPublicKey(q)).toBe(true);
    expect(schnorrVerify(p256.Point.fromBytes(q).toBytes(true), msg(), sig())).toBe('invalid_public_key');
  });
});

describe('sign and verify cross-check', () => {
  it('the verification equation V = c·A + r·G holds for our signatures, recomputed with noble directly', () => {
    const scalar = h('2538cdc29a97c19c1e99a637d6cf4f8c970c118b56ede1e6323e6d162c4b30db');
    const msg = utf8('cross-check');
    const s = schnorrSign(scalar, msg);
    const A = p256.Point.fromBytes(publicKeyFromScalar(scalar));
    const V = new Uint8Array([4, ...s.subarray(0, 64)]);
    const c = BigInt('0x' + hex(schnorrChallenge(V, A.toBytes(false), msg))) % N;
    const r = BigInt('0x' + hex(s.subarray(64)));
    expect(hex(A.multiply(c).add(p256.Point.BASE.multiply(r)).toBytes(false))).toBe(hex(V));
  });

  it('challenge is SHA-256 over length-prefixed G, V, A, message', () => {
    const V = p256.Point.BASE.multiply(5n).toBytes(false);
    const A = p256.Point.BASE.multiply(7n).toBytes(false);
    const msg = utf8('m');
    const lv = (b: Uint8Array) => [0, 0, 0, b.length, ...b];
    const expected = sha256(new Uint8Array([...lv(p256.Point.BASE.toBytes(false)), ...lv(V), ...lv(A), ...lv(msg)]));
    expect(hex(schnorrChallenge(V, A, msg))).toBe(hex(expected));
  });

  it('property: random keys and messages sign→verify, and are deterministic', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.uint8Array({ maxLength: 200 }), (seed, msg) => {
        const d = (BigInt('0x' + hex(seed)) % (N - 1n)) + 1n;
        const scalar = h(d.toString(16).padStart(64, '0'));
        const s1 = schnorrSign(scalar, msg);
        expect(hex(schnorrSign(scalar, msg))).toBe(hex(s1));
        expect(schnorrVerify(publicKeyFromScalar(scalar), msg, s1)).toBe('valid');
      }),
      { numRuns: 40 },
    );
  });
});
