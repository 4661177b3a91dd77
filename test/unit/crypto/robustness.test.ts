import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { DomainVerifier, fromHex, Session, toHex } from '../../../src/crypto/index.js';
import { isVcpError as isErr } from '../../../src/protocol/errors.js';
import { UniversalMessage } from '../../../src/protocol/pb.js';
import { EPOCH, fixture, T0, VIN } from './fixture.js';
import { seededRandom, VERIFIER_SCALAR } from './helpers.js';

const PAYLOAD = fromHex('0a020805');

describe('hostile input never throws out of the verifier or openResponse', () => {
  it('random bytes', () => {
    const f = fixture();
    const s = f.handshake();
    const c = s.signCommand(PAYLOAD, { expiresInSec: 10, now: T0, random: f.clientRandom });
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 400 }), (bytes) => {
        const r = f.verifier.verifyCommand(bytes);
        expect(r.ok).toBe(false);
        expect(() => f.verifier.handle(bytes, () => ({}))).not.toThrow();
        const o = s.openResponse(bytes, c.pending);
        expect(o.kind === 'ok' || o.kind === 'fault' || o.kind === 'ignored').toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('single-byte corruptions of a valid command are never accepted with a different payload', () => {
    const f = fixture();
    const s = f.handshake();
    const c = s.signCommand(PAYLOAD, { expiresInSec: 10, now: T0, random: f.clientRandom });
    fc.assert(
      fc.property(fc.nat(c.bytes.length - 1), fc.integer({ min: 1, max: 255 }), (pos, x) => {
        const bad = new Uint8Array(c.bytes);
        bad[pos] = bad[pos]! ^ x;
        const r = f.verifier.verifyCommand(bad);
        // A corruption may hit bytes outside the MAC (e.g. the routing address) and still be
        // accepted once; what must never happen is an accepted, different payload.
        if (r.ok) expect(toHex(r.payload)).toBe(toHex(PAYLOAD));
      }),
      { numRuns: 300 },
    );
  });

  it('fromHandshake on garbage throws only VcpError', () => {
    const f = fixture();
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), fc.uint8Array({ maxLength: 40 }), (info, tag) => {
        try {
          Session.fromHandshake({ key: f.key, vin: VIN, domain: 3, challenge: fromHex('01'), sessionInfoBytes: info, tag, now: T0 });
          throw new Error('accepted garbage');
        } catch (e) {
          expect(isErr(e)).toBe(true);
        }
      }),
      { numRuns: 200 },
    );
  });
});

describe('request matching', () => {
  it('VCSEC answers without request_uuid are matched by routing address; infotainment ones are not', () => {
    for (const [domain, expected] of [
      [2, 'ok'],
      [3, 'ignored'],
    ] as const) {
      const f = fixture({ domain });
      const s = f.handshake();
      const quiet = new DomainVerifier({
        privateScalar: fromHex(VERIFIER_SCALAR),
        domain,
        vin: VIN,
        now: f.now,
        random: seededRandom('q'),
        lookup: () => ({}),
        epoch: EPOCH,
        clockTime: 1000,
        echoRequestUuid: false,
      });
      const c = s.signCommand(PAYLOAD, { expiresInSec: 10, now: T0, random: f.clientRandom });
      const answer = quiet.handle(c.bytes, () => ({ payload: PAYLOAD }))!;
      expect(UniversalMessage.RoutableMessage.decode(answer).requestUuid.length).toBe(0);
      expect(s.openResponse(answer, c.pending).kind).toBe(expected);
    }
  });
});
