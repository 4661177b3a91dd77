/**
 * Hostile bytes into every decoder that sees network data, and round-trip properties of
 * the codecs. "Typed errors only": a decoder either returns or throws a `VcpError` with a
 * stable code — never a RangeError from protobufjs, a TypeError, or a crash.
 *
 * Inputs are both fully arbitrary bytes and mutations of VALID messages (bit flips,
 * truncations, splices), which reach much deeper into the decoders than random noise.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LocalKey } from '../../src/keys/index.js';
import { signTelemetryConfig, verifyJws } from '../../src/keys/jws.js';
import { VcpError } from '../../src/protocol/errors.js';
import { UniversalMessage } from '../../src/protocol/pb.js';
import { interpretAnswer } from '../../src/protocol/response.js';
import { decodeRoutable, encodeRoutable, fromBase64, toBase64 } from '../../src/protocol/routable.js';
import { Session, buildSessionInfoRequest, decodeSessionInfo, encodeSessionInfo, openSessionInfoResponse } from '../../src/crypto/session.js';
import { DomainVerifier } from '../../src/crypto/verifier.js';
import { serializeMetadata } from '../../src/crypto/tlv.js';

const RUNS = Number(process.env.FUZZ_DECODER_RUNS ?? 1500);
const VIN = '5YJ3E1EA8MF000002';

/** Calls `fn`; anything thrown must be a VcpError with a snake_case code. */
function typedOnly(fn: () => unknown): void {
  try {
    fn();
  } catch (e) {
    if (!(e instanceof VcpError)) throw new Error(`untyped ${(e as Error)?.constructor?.name}: ${(e as Error)?.message}`);
    expect(e.code).toMatch(/^[a-z][a-z0-9_]*$/);
  }
}

// A real handshake and a real signed exchange, to mutate.
let draws = 0;
const random = (n: number): Uint8Array => {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i += 32) out.set(createHash('sha256').update(`fuzz-fixture-${draws++}`).digest().subarray(0, n - i), i);
  return out;
};
const client = LocalKey.fromScalar(Uint8Array.from({ length: 32 }, (_, i) => i + 7));
const vehicle = new DomainVerifier<true>({
  privateScalar: Uint8Array.from({ length: 32 }, (_, i) => 200 - i),
  domain: 3,
  vin: VIN,
  now: () => 1_700_000_000_000,
  random,
  lookup: (pub) => (Buffer.from(pub).equals(Buffer.from(client.publicKey)) ? true : undefined),
});
const hs = buildSessionInfoRequest({ domain: 3, publicKey: client.publicKey, random });
const hsAnswer = vehicle.answerSessionInfoRequest(UniversalMessage.RoutableMessage.decode(hs.bytes))!;
const opened = openSessionInfoResponse(hsAnswer, hs);
if (opened.kind !== 'session_info') throw new Error('fixture handshake failed');
const session = Session.fromHandshake({ key: client, vin: VIN, domain: 3, challenge: hs.uuid, ...opened, now: 1_700_000_000_000 });
const signed = session.signCommand(new Uint8Array([0x0a, 0x02, 0x08, 0x01]), { expiresInSec: 30, now: 1_700_000_000_000, random });
const handled = vehicle.handle(signed.bytes, () => ({ payload: new Uint8Array([0x0a, 0x00]) }));
if (!handled) throw new Error('fixture command answer missing');
const commandAnswer: Uint8Array = handled;
const VALID: Uint8Array[] = [hs.bytes, hsAnswer, signed.bytes, commandAnswer];

const mutated = fc.oneof(
  fc.uint8Array({ maxLength: 2048 }),
  fc.tuple(fc.constantFrom(...VALID), fc.nat(), fc.integer({ min: 0, max: 7 })).map(([b, i, bit]) => {
    const c = Uint8Array.from(b);
    if (c.length) c[i % c.length] = c[i % c.length]! ^ (1 << bit);
    return c;
  }),
  fc.tuple(fc.constantFrom(...VALID), fc.nat()).map(([b, n]) => b.subarray(0, n % (b.length + 1))),
  fc.tuple(fc.constantFrom(...VALID), fc.nat(), fc.uint8Array({ maxLength: 16 })).map(([b, i, junk]) => {
    const at = i % (b.length + 1);
    return Uint8Array.from([...b.subarray(0, at), ...junk, ...b.subarray(at)]);
  }),
);

describe('arbitrary bytes into every decoder: typed errors only', () => {
  it('decodeRoutable', () => {
    fc.assert(fc.property(mutated, (b) => typedOnly(() => decodeRoutable(b))), { numRuns: RUNS });
  });

  it('decodeSessionInfo', () => {
    fc.assert(fc.property(mutated, (b) => typedOnly(() => decodeSessionInfo(b))), { numRuns: RUNS });
  });

  it('openSessionInfoResponse never throws and never yields a session for altered bytes', () => {
    fc.assert(
      fc.property(mutated, (b) => {
        typedOnly(() => {
          const r = openSessionInfoResponse(b, hs);
          if (r.kind === 'session_info' && !Buffer.from(b).equals(Buffer.from(hsAnswer))) {
            // A structurally different message may still carry the same fields; the tag decides.
            typedOnly(() => Session.fromHandshake({ key: client, vin: VIN, domain: 3, challenge: hs.uuid, ...r, now: 1_700_000_000_000 }));
          }
        });
      }),
      { numRuns: RUNS },
    );
  });

  // Plaintext answers are accepted by design (firmware before 2024.38 ignores
  // FLAG_ENCRYPT_RESPONSE and its answers carry no authentication), so the property is about
  // answers that open as ENCRYPTED: a mutation must never authenticate a different payload.
  it('Session.openResponse: never throws; altered encrypted answers never open as a different payload', () => {
    const genuine = session.openResponse(commandAnswer, { ...signed.pending, responses: new (signed.pending.responses.constructor as new () => typeof signed.pending.responses)() });
    expect(genuine.kind === 'ok' && genuine.encrypted).toBe(true);
    fc.assert(
      fc.property(mutated, (b) => {
        const pending = { ...signed.pending, responses: new (signed.pending.responses.constructor as new () => typeof signed.pending.responses)() };
        typedOnly(() => {
          const r = session.openResponse(b, pending);
          if (r.kind === 'ok' && r.encrypted && genuine.kind === 'ok') expect(Buffer.from(r.payload).equals(Buffer.from(genuine.payload))).toBe(true);
        });
      }),
      { numRuns: RUNS },
    );
  });

  it('interpretAnswer (both domains) on arbitrary plaintext', () => {
    fc.assert(
      fc.property(fc.constantFrom(2, 3), mutated, (domain, b) => typedOnly(() => interpretAnswer(domain, b))),
      { numRuns: RUNS },
    );
  });

  it('the vehicle-side verifier answers or refuses, never throws', () => {
    fc.assert(fc.property(mutated, (b) => typedOnly(() => vehicle.handle(b, () => ({ payload: new Uint8Array() })))), { numRuns: RUNS });
  });

  it('fromBase64 on arbitrary text', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (t) => typedOnly(() => fromBase64(t))), { numRuns: RUNS });
  });

  it('verifyJws on arbitrary and mutated tokens', () => {
    const token = signTelemetryConfig(client, { hostname: 'telemetry.example.com', fields: {} });
    const tokens = fc.oneof(
      fc.string({ maxLength: 300 }),
      fc.tuple(fc.string({ maxLength: 60 }), fc.string({ maxLength: 60 }), fc.string({ maxLength: 60 })).map((p) => p.join('.')),
      fc.tuple(fc.nat(), fc.constantFrom(...'ABCDEFabcdef0123456789-_.=')).map(([i, ch]) => {
        const at = i % token.length;
        return token.slice(0, at) + ch + token.slice(at + 1);
      }),
    );
    fc.assert(
      fc.property(tokens, (t) =>
        typedOnly(() => {
          verifyJws(t);
          // A token that verifies must be the genuine one (or differ only in ignored padding).
          expect(t.replace(/=+/g, '')).toBe(token.replace(/=+/g, ''));
        }),
      ),
      { numRuns: RUNS },
    );
  });
});

/** The test's own TLV reader: tag, length, value … 0xFF. */
function parseTlv(b: Uint8Array): Array<[number, number[]]> {
  const out: Array<[number, number[]]> = [];
  let i = 0;
  while (i < b.length && b[i] !== 0xff) {
    const tag = b[i]!;
    const len = b[i + 1]!;
    out.push([tag, [...b.subarray(i + 2, i + 2 + len)]]);
    i += 2 + len;
  }
  expect(i).toBe(b.length - 1);
  return out;
}

describe('codec round trips', () => {
  const items = fc
    .uniqueArray(fc.integer({ min: 0, max: 254 }), { maxLength: 12 })
    .chain((tags) => fc.tuple(...tags.sort((a, b) => a - b).map((t) => fc.tuple(fc.constant(t), fc.uint8Array({ maxLength: 255 })))));

  it('TLV metadata: parse(serialize(items)) = items, and distinct item lists serialize differently', () => {
    fc.assert(
      fc.property(items, items, (a, b) => {
        const sa = serializeMetadata(a);
        expect(parseTlv(sa)).toEqual(a.map(([t, v]) => [t, [...v]]));
        const same = JSON.stringify(a.map(([t, v]) => [t, [...v]])) === JSON.stringify(b.map(([t, v]) => [t, [...v]]));
        expect(Buffer.from(sa).equals(Buffer.from(serializeMetadata(b)))).toBe(same);
      }),
      { numRuns: RUNS },
    );
  });

  const bytes = (max: number) => fc.uint8Array({ maxLength: max });
  const routable = fc.record(
    {
      toDestination: fc.oneof(fc.record({ domain: fc.constantFrom(2, 3) }), fc.record({ routingAddress: bytes(16) })),
      fromDestination: fc.oneof(fc.record({ domain: fc.constantFrom(2, 3) }), fc.record({ routingAddress: bytes(16) })),
      protobufMessageAsBytes: bytes(200),
      uuid: bytes(16),
      flags: fc.nat(),
      requestUuid: bytes(16),
      signatureData: fc.record({
        signerIdentity: fc.record({ publicKey: bytes(65) }),
        HMAC_PersonalizedData: fc.record({ epoch: bytes(16), counter: fc.nat(), expiresAt: fc.nat(), tag: bytes(32) }),
      }),
    },
    { requiredKeys: [] },
  );

  it('RoutableMessage: decode(encode(m)) re-encodes to the same bytes; base64 round-trips', () => {
    fc.assert(
      fc.property(routable, (m) => {
        const wire = encodeRoutable(m as UniversalMessage.IRoutableMessage);
        const back = decodeRoutable(wire);
        expect(Buffer.from(encodeRoutable(back)).equals(Buffer.from(wire))).toBe(true);
        expect(Buffer.from(fromBase64(toBase64(wire))).equals(Buffer.from(wire))).toBe(true);
        if (m.signatureData?.HMAC_PersonalizedData) {
          expect(back.signatureData?.HMAC_PersonalizedData?.counter).toBe(m.signatureData.HMAC_PersonalizedData.counter);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('SessionInfo: decode(encode(fields)) = fields', () => {
    const info = fc.record({
      counter: fc.nat(),
      publicKey: fc.uint8Array({ minLength: 65, maxLength: 65 }),
      epoch: fc.uint8Array({ minLength: 16, maxLength: 16 }),
      clockTime: fc.nat(),
      status: fc.constantFrom(0, 1),
      handle: fc.nat(),
    });
    fc.assert(
      fc.property(info, (f) => {
        const d = decodeSessionInfo(encodeSessionInfo(f));
        expect({ ...d, publicKey: [...d.publicKey], epoch: [...d.epoch] }).toEqual({ ...f, publicKey: [...f.publicKey], epoch: [...f.epoch] });
      }),
      { numRuns: RUNS },
    );
  });
});
