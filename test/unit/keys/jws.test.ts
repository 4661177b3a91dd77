import { describe, expect, it } from 'vitest';
import {
  LocalKey,
  TELEMETRY_AUDIENCE,
  loadKeyFromPem,
  signJwsClaims,
  signTelemetryConfig,
  verifyJws,
  verifyTelemetryJws,
} from '../../../src/keys/index.js';
import { canonicalJson } from '../../../src/keys/jws.js';
import { schnorrVerify } from '../../../src/crypto/schnorr.js';
import vectors from './vectors/schnorr-p256.json' with { type: 'json' };
import { expectKeyError, testKeys } from './fixtures.js';

const key = () => loadKeyFromPem(testKeys.client.privatePem);
const other = () => loadKeyFromPem(testKeys.vehicle.privatePem);
const config = {
  hostname: 'telemetry.example.com',
  port: 4443,
  ca: '-----BEGIN CERTIFICATE-----\nMIIB...\n-----END CERTIFICATE-----\n',
  fields: { BatteryLevel: { interval_seconds: 60 }, VehicleSpeed: { interval_seconds: 10 } },
  alert_types: ['service'],
  exp: 1_900_000_000,
};
const seg = (token: string, i: number) => JSON.parse(Buffer.from(token.split('.')[i]!, 'base64url').toString('utf8'));

describe('reference token (published vector)', () => {
  const v = vectors.jws[0]!;
  it('verifies with the documented issuer key, claims as published', () => {
    const pub = new Uint8Array(Buffer.from(v.publicKey, 'hex'));
    const out = verifyJws(v.token, { publicKey: pub, audience: v.audience });
    expect(out.claims).toEqual(v.claims);
    expect(Buffer.from(out.issuer).toString('hex')).toBe(v.publicKey);
    expect(out.header).toEqual({ alg: 'Tesla.SS256', typ: 'JWT' });
  });
  it('is refused for the telemetry audience (it was issued for one vehicle)', () => {
    expectKeyError(() => verifyTelemetryJws(v.token), 'invalid_jws');
  });
});

describe('signTelemetryConfig', () => {
  it('produces header, claims and iss/aud as the protocol defines them', () => {
    const k = key();
    const token = signTelemetryConfig(k, { ...config, iss: 'attacker', aud: 'elsewhere' });
    expect(seg(token, 0)).toEqual({ alg: 'Tesla.SS256', typ: 'JWT' });
    const claims = seg(token, 1);
    expect(claims.aud).toBe('com.tesla.fleet.TelemetryClient');
    expect(claims.iss).toBe(Buffer.from(testKeys.client.publicKey, 'hex').toString('base64'));
    expect(claims.iss).toMatch(/=$/); // standard, padded base64 (65 bytes)
    expect(claims.hostname).toBe(config.hostname);
    expect(claims.fields).toEqual(config.fields);
    expect(Buffer.from(token.split('.')[2]!, 'base64url')).toHaveLength(96);
  });

  it('header and payload are compact JSON with sorted keys (as the reference serializes them)', () => {
    const token = signTelemetryConfig(key(), { z: 1, a: { y: 2, b: [3, { d: 1, c: 2 }] }, s: '<&>' });
    expect(Buffer.from(token.split('.')[0]!, 'base64url').toString()).toBe('{"alg":"Tesla.SS256","typ":"JWT"}');
    const payload = Buffer.from(token.split('.')[1]!, 'base64url').toString();
    expect(payload).toBe(
      '{"a":{"b":[3,{"c":2,"d":1}],"y":2},"aud":"com.tesla.fleet.TelemetryClient","iss":"' +
        Buffer.from(testKeys.client.publicKey, 'hex').toString('base64') +
        '","s":"\\u003c\\u0026\\u003e","z":1}',
    );
  });

  it('sign → verify round trip, with and without the expected key', () => {
    const k = key();
    const token = signTelemetryConfig(k, config);
    const claims = verifyTelemetryJws(token, k.publicKey);
    expect(claims).toMatchObject(config);
    expect(verifyTelemetryJws(token)).toMatchObject(config);
  });

  it('the signature verifies with the independent Schnorr verifier over header.payload', () => {
    const k = key();
    const token = signTelemetryConfig(k, config);
    const [h, p, s] = token.split('.') as [string, string, string];
    expect(schnorrVerify(k.publicKey, new TextEncoder().encode(`${h}.${p}`), Buffer.from(s, 'base64url'))).toBe('valid');
  });

  it('is deterministic for a fixed key and config, and differs across keys/configs', () => {
    const t1 = signTelemetryConfig(key(), config);
    const t2 = signTelemetryConfig(LocalKey.fromScalar(Buffer.from(testKeys.client.scalar, 'hex')), { ...config });
    expect(t2).toBe(t1);
    expect(signTelemetryConfig(key(), { ...config, port: 4444 })).not.toBe(t1);
    expect(signTelemetryConfig(other(), config)).not.toBe(t1);
  });

  it('a per-vehicle token uses the vehicle audience', () => {
    const token = signTelemetryConfig(key(), config, { vin: '5YJ3E1EA0PF000001' });
    expect(seg(token, 1).aud).toBe('com.tesla.vehicle.5YJ3E1EA0PF000001.TelemetryClient');
    expect(verifyJws(token, { audience: 'com.tesla.vehicle.5YJ3E1EA0PF000001.TelemetryClient' }).claims.port).toBe(4443);
    expectKeyError(() => verifyTelemetryJws(token), 'invalid_jws');
  });

  it('refuses configs that are not JSON objects', () => {
    for (const bad of [null, [1, 2], 'x', 3]) {
      expectKeyError(() => signJwsClaims(key(), bad as never, TELEMETRY_AUDIENCE), 'invalid_request');
    }
    expectKeyError(() => signTelemetryConfig(key(), { n: Number.NaN }), 'invalid_request');
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 100; i++) deep = { d: deep };
    expectKeyError(() => signTelemetryConfig(key(), deep), 'invalid_request');
  });

  it('canonicalJson sorts keys by UTF-8 bytes like the reference', () => {
    // U+FF21 (EF BC A1) sorts before U+1F600 (F0 9F 98 80) in UTF-8, after it in UTF-16.
    expect(canonicalJson({ '\u{1F600}': 1, '\uFF21': 2 })).toBe('{"\uFF21":2,"\u{1F600}":1}');
    expect(canonicalJson({ s: '\u2028' })).toBe('{"s":"\\u2028"}');
  });
});

describe('verification refuses forgeries', () => {
  const token = signTelemetryConfig(key(), config);

  it('a token from another key when a key is expected', () => {
    expectKeyError(() => verifyTelemetryJws(signTelemetryConfig(other(), config), key().publicKey), 'jws_untrusted_issuer');
  });

  it('swapping iss to another key (signature no longer matches)', () => {
    const [h, p, s] = token.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString());
    claims.iss = Buffer.from(testKeys.vehicle.publicKey, 'hex').toString('base64');
    const forged = `${h}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${s}`;
    expectKeyError(() => verifyTelemetryJws(forged), 'invalid_jws');
  });

  it('alg none / other algorithms, wrong segment counts, garbage', () => {
    const [, p, s] = token.split('.') as [string, string, string];
    for (const alg of ['none', 'ES256', 'HS256']) {
      const h = Buffer.from(JSON.stringify({ alg, typ: 'JWT' })).toString('base64url');
      expectKeyError(() => verifyTelemetryJws(`${h}.${p}.${s}`), 'invalid_jws');
    }
    for (const bad of ['', 'a.b', `${token}.x`, 'a.b.c', token.replace(/\./g, '')]) {
      expectKeyError(() => verifyTelemetryJws(bad), 'invalid_jws');
    }
  });

  it('a one-bit flip at every position of the token is rejected (bit varies with position)', () => {
    // One flip per character (bit = i mod 8, so every bit position is exercised across the
    // token); all 8 bits at the characters next to the dots, where segments meet.
    const flips: Array<[number, number]> = [];
    for (let i = 0; i < token.length; i++) flips.push([i, i % 8]);
    for (const dot of [token.indexOf('.'), token.lastIndexOf('.')]) {
      for (const i of [dot - 1, dot, dot + 1]) for (let bit = 0; bit < 8; bit++) flips.push([i, bit]);
    }
    for (const [i, bit] of flips) {
      const flipped = token.slice(0, i) + String.fromCharCode(token.charCodeAt(i) ^ (1 << bit)) + token.slice(i + 1);
      expect(() => verifyTelemetryJws(flipped), `flip at ${i} bit ${bit}`).toThrow();
    }
    expect(flips.length).toBe(token.length + 48);
  });

  it('expired / not-yet-valid tokens when a clock is given', () => {
    const t = signTelemetryConfig(key(), { ...config, exp: 1000, nbf: 500 });
    expectKeyError(() => verifyTelemetryJws(t, undefined, { now: () => 1_000_000 }), 'jws_expired');
    expectKeyError(() => verifyTelemetryJws(t, undefined, { now: () => 400_000 }), 'jws_not_yet_valid');
    expect(verifyTelemetryJws(t, undefined, { now: () => 700_000 }).exp).toBe(1000);
  });

  it('errors never echo the token', () => {
    const bad = token.slice(0, -2) + (token.endsWith('AA') ? 'BA' : 'AA');
    expectKeyError(() => verifyTelemetryJws(bad), 'invalid_jws', [token.split('.')[1]!, token.split('.')[2]!.slice(0, 40)]);
  });
});
