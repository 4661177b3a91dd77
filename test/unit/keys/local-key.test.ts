import { createHash, createPublicKey } from 'node:crypto';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { LocalKey, fingerprint, generateKeyPair, loadKeyFromPem, parsePublicKey, publicKeyToPem } from '../../../src/keys/index.js';
import type { CommandKey } from '../../../src/crypto/types.js';
import { expectKeyError, pemBodyLines, testKeys } from './fixtures.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const client = () => loadKeyFromPem(testKeys.client.privatePem, 'client.key');
const vehicle = () => loadKeyFromPem(testKeys.vehicle.privatePem, 'vehicle.key');

describe('public key formats', () => {
  it('the 65-byte point matches the SPKI PEM the key exports', () => {
    const key = client();
    expect(key.publicKey).toHaveLength(65);
    expect(key.publicKey[0]).toBe(0x04);
    expect(key.publicKeyPem()).toBe(testKeys.client.publicPem);
    const jwk = createPublicKey(key.publicKeyPem()).export({ format: 'jwk' });
    expect(hex(key.publicKey)).toBe('04' + Buffer.from(jwk.x!, 'base64url').toString('hex') + Buffer.from(jwk.y!, 'base64url').toString('hex'));
    expect(hex(parsePublicKey(key.publicKeyPem()))).toBe(hex(key.publicKey));
    expect(publicKeyToPem(key.publicKey)).toBe(key.publicKeyPem());
  });

  it('generated pairs: the private PEM loads and its point matches the public PEM', () => {
    for (const format of ['sec1', 'pkcs8'] as const) {
      const pair = generateKeyPair({ format });
      expect(pair.privatePem).toContain(format === 'sec1' ? 'BEGIN EC PRIVATE KEY' : 'BEGIN PRIVATE KEY');
      const key = loadKeyFromPem(pair.privatePem);
      expect(hex(parsePublicKey(pair.publicPem))).toBe(hex(key.publicKey));
    }
  });

  it('publicKey is a copy: mutating it does not change the key', () => {
    const key = client();
    const p = key.publicKey;
    p[1]! ^= 0xff;
    expect(hex(key.publicKey)).toBe(testKeys.client.publicKey);
  });

  it('fingerprint is SHA-256 of the uncompressed point', () => {
    const key = client();
    expect(key.fingerprint).toBe(createHash('sha256').update(Buffer.from(testKeys.client.publicKey, 'hex')).digest('hex'));
    expect(fingerprint(key.publicKey)).toBe(key.fingerprint);
  });

  it('fromScalar gives the same key as the PEM', () => {
    const key = LocalKey.fromScalar(Buffer.from(testKeys.client.scalar, 'hex'));
    expect(hex(key.publicKey)).toBe(testKeys.client.publicKey);
    expectKeyError(() => LocalKey.fromScalar(new Uint8Array(32)), 'key_corrupt');
    expectKeyError(() => LocalKey.fromScalar(new Uint8Array(31).fill(1)), 'key_corrupt');
  });
});

describe('ECDH (protocol.md test keys)', () => {
  it('client c with vehicle V gives K = SHA1(Sx)[:16] = the documented session key', () => {
    const sx = client().sharedSecretX(Buffer.from(testKeys.vehicle.publicKey, 'hex'));
    expect(sx).toHaveLength(32);
    const k = createHash('sha1').update(sx).digest().subarray(0, 16);
    expect(k.toString('hex')).toBe(testKeys.sessionKey);
  });

  it('is symmetric: vehicle v with client C gives the same Sx', () => {
    const a = client().sharedSecretX(Buffer.from(testKeys.vehicle.publicKey, 'hex'));
    const b = vehicle().sharedSecretX(Buffer.from(testKeys.client.publicKey, 'hex'));
    expect(hex(a)).toBe(hex(b));
  });

  it('refuses invalid peer points with invalid_public_key', () => {
    const key = client();
    const off = Buffer.from(testKeys.vehicle.publicKey, 'hex');
    off[64]! ^= 1;
    expectKeyError(() => key.sharedSecretX(off), 'invalid_public_key');
    expectKeyError(() => key.sharedSecretX(Buffer.concat([Buffer.of(4), Buffer.alloc(64)])), 'invalid_public_key');
    expectKeyError(() => key.sharedSecretX(Buffer.from(testKeys.vehicle.publicKey, 'hex').subarray(0, 64)), 'invalid_public_key');
    // Compressed encoding of a valid point: refused on purpose (protocol uses uncompressed).
    const v = Buffer.from(testKeys.vehicle.publicKey, 'hex');
    const compressed = Buffer.concat([Buffer.of(2 + (v[64]! & 1)), v.subarray(1, 33)]);
    expectKeyError(() => key.sharedSecretX(compressed), 'invalid_public_key');
  });
});

describe('the private scalar is unreachable by accident', () => {
  const scalarHex = testKeys.client.scalar;
  const scalarB64 = Buffer.from(scalarHex, 'hex').toString('base64');
  const scalarB64url = Buffer.from(scalarHex, 'hex').toString('base64url');
  const secrets = [scalarHex, scalarHex.toUpperCase(), scalarB64, scalarB64url, ...pemBodyLines(testKeys.client.privatePem)];

  function expectClean(rendered: string) {
    for (const s of secrets) expect(rendered).not.toContain(s);
  }

  it('JSON, inspect (even showHidden), String, keys and spread show only public data', () => {
    const key = client();
    const json = JSON.stringify(key);
    expect(JSON.parse(json)).toEqual({ type: 'LocalKey', publicKey: testKeys.client.publicKey, fingerprint: key.fingerprint });
    expectClean(json);
    expectClean(JSON.stringify({ nested: { key } }));
    expectClean(inspect(key));
    expectClean(inspect(key, { showHidden: true, depth: Infinity, customInspect: false, getters: true }));
    expectClean(inspect({ key }, { depth: Infinity }));
    expectClean(String(key));
    expectClean(`${key}`);
    expect(Object.keys(key)).toEqual([]);
    expectClean(JSON.stringify({ ...key }));
    expect(inspect(key)).toContain(key.fingerprint.slice(0, 16));
  });

  it('errors from the key do not carry it', () => {
    const key = client();
    const err = expectKeyError(() => key.sharedSecretX(new Uint8Array(65)), 'invalid_public_key', secrets);
    expect(err.cause).toBeUndefined();
  });

  it('conforms to the CommandKey interface used by the session layer', () => {
    const k: CommandKey = client();
    expect(k.signJws(new Uint8Array([1, 2, 3]))).toHaveLength(96);
  });
});
