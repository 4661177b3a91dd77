import { describe, expect, it } from 'vitest';
import { DomainVerifier, fromHex, toHex, type Session, type VerifyResult } from '../../../src/crypto/index.js';
import { UniversalMessage } from '../../../src/protocol/pb.js';
import { EPOCH, fixture, T0, VIN } from './fixture.js';
import { seededRandom, testKey, VERIFIER_SCALAR } from './helpers.js';

const Fault = UniversalMessage.MessageFault_E;
const PAYLOAD = fromHex('120452020801');
type Msg = UniversalMessage.RoutableMessage;

function mutate(bytes: Uint8Array, fn: (m: Msg) => void): Uint8Array {
  const m = UniversalMessage.RoutableMessage.decode(new Uint8Array(bytes));
  fn(m);
  return UniversalMessage.RoutableMessage.encode(m).finish();
}

function faultOf(r: VerifyResult<unknown>): number {
  return r.ok ? 0 : r.fault;
}

function sign(s: Session, f: ReturnType<typeof fixture>, o: { expiresInSec?: number; method?: 'hmac' | 'aes-gcm' } = {}) {
  return s.signCommand(PAYLOAD, { expiresInSec: o.expiresInSec ?? 10, now: f.clock.t, random: f.clientRandom, ...(o.method ? { method: o.method } : {}) });
}

describe('DomainVerifier round trip', () => {
  for (const domain of [2, 3]) {
    for (const method of ['hmac', 'aes-gcm'] as const) {
      it(`domain ${domain}, ${method}: verifies, returns payload, signer and request hash`, () => {
        const f = fixture({ domain });
        const s = f.handshake();
        const c = sign(s, f, { method });
        const r = f.verifier.verifyCommand(c.bytes);
        if (!r.ok) throw new Error(`fault ${r.fault}`);
        expect(toHex(r.payload)).toBe(toHex(PAYLOAD));
        expect(r.signer).toEqual({ role: 'owner' });
        expect(r.counter).toBe(1);
        expect(r.method).toBe(method);
        expect(r.encryptResponse).toBe(true);
        expect(toHex(r.requestHash)).toBe(toHex(c.requestHash));
        expect(r.requestHash.length).toBe(method === 'aes-gcm' || domain === 2 ? 17 : 33);
        if (method === 'aes-gcm') {
          const wire = UniversalMessage.RoutableMessage.decode(c.bytes);
          expect(toHex(wire.protobufMessageAsBytes!)).not.toBe(toHex(PAYLOAD));
        }
        const opened = s.openResponse(f.verifier.reply(r, { payload: fromHex('aa') }), c.pending);
        expect(opened.kind === 'ok' && toHex(opened.payload)).toBe('aa');
      });
    }
  }
});

describe('DomainVerifier rejects one-field changes with the right fault', () => {
  const setup = () => {
    const f = fixture();
    const s = f.handshake();
    return { f, s, c: sign(s, f) };
  };

  it('baseline is accepted', () => {
    const { f, c } = setup();
    expect(faultOf(f.verifier.verifyCommand(c.bytes))).toBe(0);
  });

  it('one flipped tag bit → INVALID_SIGNATURE, with tagged session info in the answer', () => {
    const { f, s, c } = setup();
    const bad = mutate(c.bytes, (m) => {
      const t = m.signatureData!.HMAC_PersonalizedData!.tag!;
      t[5] = t[5]! ^ 0x10;
    });
    const r = f.verifier.verifyCommand(bad);
    expect(faultOf(r)).toBe(Fault.MESSAGEFAULT_ERROR_INVALID_SIGNATURE);
    const answer = f.verifier.faultReply(r as Exclude<typeof r, { ok: true }>)!;
    const opened = s.openResponse(answer, c.pending);
    if (opened.kind !== 'fault' || !opened.sessionInfo) throw new Error('expected fault with session info');
    expect(s.adopt({ challenge: c.uuid, ...opened.sessionInfo, now: f.clock.t }).adopted).toBe(true);
    // The rejected message did not advance the vehicle counter: the original still verifies.
    expect(faultOf(f.verifier.verifyCommand(c.bytes))).toBe(0);
  });

  it('payload change → INVALID_SIGNATURE', () => {
    const { f, c } = setup();
    const bad = mutate(c.bytes, (m) => {
      m.protobufMessageAsBytes = fromHex('120452020800');
    });
    expect(faultOf(f.verifier.verifyCommand(bad))).toBe(Fault.MESSAGEFAULT_ERROR_INVALID_SIGNATURE);
  });

  it('flags change → INVALID_SIGNATURE (flags are authenticated)', () => {
    const { f, c } = setup();
    expect(faultOf(f.verifier.verifyCommand(mutate(c.bytes, (m) => void (m.flags = 0))))).toBe(Fault.MESSAGEFAULT_ERROR_INVALID_SIGNATURE);
  });

  it('counter change → INVALID_SIGNATURE (counter is in the metadata)', () => {
    const { f, c } = setup();
    const bad = mutate(c.bytes, (m) => void (m.signatureData!.HMAC_PersonalizedData!.counter = 5));
    expect(faultOf(f.verifier.verifyCommand(bad))).toBe(Fault.MESSAGEFAULT_ERROR_INVALID_SIGNATURE);
  });

  it('other VIN → INVALID_SIGNATURE (the VIN only exists inside the MAC)', () => {
    const { f, c } = setup();
    const other = new DomainVerifier({
      privateScalar: fromHex(VERIFIER_SCALAR),
      domain: 3,
      vin: '5YJ3E1EA7KF000002',
      now: f.now,
      random: seededRandom('other'),
      lookup: () => ({ role: 'owner' }),
      epoch: EPOCH,
      clockTime: 1000,
    });
    expect(faultOf(other.verifyCommand(c.bytes))).toBe(Fault.MESSAGEFAULT_ERROR_INVALID_SIGNATURE);
  });

  it('other epoch → INCORRECT_EPOCH', () => {
    const { f, c } = setup();
    f.verifier.rotateEpoch(fromHex('ee'.repeat(16)));
    expect(faultOf(f.verifier.verifyCommand(c.bytes))).toBe(Fault.MESSAGEFAULT_ERROR_INCORRECT_EPOCH);
  });

  it('replayed counter → INVALID_TOKEN_OR_COUNTER', () => {
    const { f, c } = setup();
    expect(faultOf(f.verifier.verifyCommand(c.bytes))).toBe(0);
    expect(faultOf(f.verifier.verifyCommand(c.bytes))).toBe(Fault.MESSAGEFAULT_ERROR_INVALID_TOKEN_OR_COUNTER);
  });

  it('expired → TIME_EXPIRED; exactly at expires_at is still valid', () => {
    const { f, c } = setup();
    f.clock.t += 10_999; // vehicle clock 1010 = expires_at
    expect(faultOf(f.verifier.verifyCommand(c.bytes))).toBe(0);
    const { f: f2, c: c2 } = setup();
    f2.clock.t += 11_000;
    expect(faultOf(f2.verifier.verifyCommand(c2.bytes))).toBe(Fault.MESSAGEFAULT_ERROR_TIME_EXPIRED);
  });

  it('expires too far in the future → TIME_TO_LIVE_TOO_LONG', () => {
    const f = fixture();
    const s = f.handshake();
    expect(faultOf(f.verifier.verifyCommand(sign(s, f, { expiresInSec: f.verifier.maxTtlSec }).bytes))).toBe(0);
    expect(faultOf(f.verifier.verifyCommand(sign(s, f, { expiresInSec: f.verifier.maxTtlSec + 1 }).bytes))).toBe(
      Fault.MESSAGEFAULT_ERROR_TIME_TO_LIVE_TOO_LONG,
    );
  });

  it('unknown key → UNKNOWN_KEY_ID', () => {
    const { f, c } = setup();
    f.enrolled.clear();
    const r = f.verifier.verifyCommand(c.bytes);
    expect(faultOf(r)).toBe(Fault.MESSAGEFAULT_ERROR_UNKNOWN_KEY_ID);
    // No session info for an unknown signer.
    const answer = UniversalMessage.RoutableMessage.decode(f.verifier.faultReply(r as Exclude<typeof r, { ok: true }>)!);
    expect(answer.sessionInfo ?? null).toBeNull();
    const stranger = mutate(c.bytes, (m) => void (m.signatureData!.signerIdentity!.publicKey = testKey('03'.repeat(32)).publicKey));
    expect(faultOf(fixture().verifier.verifyCommand(stranger))).toBe(Fault.MESSAGEFAULT_ERROR_UNKNOWN_KEY_ID);
  });

  it('other domain → INVALID_DOMAINS; no signature → BAD_PARAMETER; garbage → DECODING', () => {
    const { f, c } = setup();
    expect(faultOf(f.verifier.verifyCommand(mutate(c.bytes, (m) => void (m.toDestination = { domain: 2 }))))).toBe(
      Fault.MESSAGEFAULT_ERROR_INVALID_DOMAINS,
    );
    expect(faultOf(f.verifier.verifyCommand(mutate(c.bytes, (m) => void (m.signatureData = null))))).toBe(
      Fault.MESSAGEFAULT_ERROR_BAD_PARAMETER,
    );
    expect(faultOf(f.verifier.verifyCommand(fromHex('ffffffff')))).toBe(Fault.MESSAGEFAULT_ERROR_DECODING);
  });

  it('AES-GCM: short nonce → IV_INCORRECT_LENGTH, flipped ciphertext bit → INVALID_SIGNATURE', () => {
    const f = fixture();
    const s = f.handshake();
    const c = sign(s, f, { method: 'aes-gcm' });
    const shortNonce = mutate(c.bytes, (m) => {
      const g = m.signatureData!.AES_GCM_PersonalizedData!;
      g.nonce = g.nonce!.subarray(0, 8);
    });
    expect(faultOf(f.verifier.verifyCommand(shortNonce))).toBe(Fault.MESSAGEFAULT_ERROR_IV_INCORRECT_LENGTH);
    const flipped = mutate(c.bytes, (m) => {
      m.protobufMessageAsBytes![0] = m.protobufMessageAsBytes![0]! ^ 1;
    });
    expect(faultOf(f.verifier.verifyCommand(flipped))).toBe(Fault.MESSAGEFAULT_ERROR_INVALID_SIGNATURE);
    expect(faultOf(f.verifier.verifyCommand(c.bytes))).toBe(0);
  });
});

describe('counter policies', () => {
  it('VCSEC requires strictly increasing counters', () => {
    const f = fixture({ domain: 2 });
    const s = f.handshake();
    const c1 = sign(s, f);
    const c2 = sign(s, f);
    expect(f.verifier.counterMode).toBe('strict');
    expect(faultOf(f.verifier.verifyCommand(c2.bytes))).toBe(0);
    expect(faultOf(f.verifier.verifyCommand(c1.bytes))).toBe(Fault.MESSAGEFAULT_ERROR_INVALID_TOKEN_OR_COUNTER);
  });

  it('infotainment accepts out-of-order counters within the window once each', () => {
    const f = fixture({ domain: 3 });
    const s = f.handshake();
    const cs = Array.from({ length: 5 }, () => sign(s, f));
    expect(f.verifier.counterMode).toBe('window');
    for (const i of [4, 1, 3, 0, 2]) expect(faultOf(f.verifier.verifyCommand(cs[i]!.bytes))).toBe(0);
    for (const c of cs) expect(faultOf(f.verifier.verifyCommand(c.bytes))).toBe(Fault.MESSAGEFAULT_ERROR_INVALID_TOKEN_OR_COUNTER);
  });

  it('infotainment: an out-of-order command must expire within 30 s', () => {
    const f = fixture({ domain: 3 });
    const s = f.handshake();
    const slow = sign(s, f, { expiresInSec: 60 });
    const fast = sign(s, f, { expiresInSec: 10 });
    expect(faultOf(f.verifier.verifyCommand(fast.bytes))).toBe(0);
    expect(faultOf(f.verifier.verifyCommand(slow.bytes))).toBe(Fault.MESSAGEFAULT_ERROR_TIME_TO_LIVE_TOO_LONG);
  });

  it('a new epoch resets counters; session info reports the signer counter', () => {
    const f = fixture({ domain: 2 });
    const s = f.handshake();
    for (let i = 0; i < 3; i++) f.verifier.verifyCommand(sign(s, f).bytes);
    expect(f.verifier.counterFor(f.key.publicKey)).toBe(3);
    const again = f.handshake();
    expect(again.counter).toBe(3);
    f.verifier.rotateEpoch();
    expect(f.verifier.counterFor(f.key.publicKey)).toBe(0);
    expect(f.verifier.clockTime()).toBe(0);
  });
});

describe('answers', () => {
  it('swap to/from, echo the request uuid and count responses', () => {
    const f = fixture();
    const s = f.handshake();
    const c = sign(s, f);
    const r = f.verifier.verifyCommand(c.bytes);
    if (!r.ok) throw new Error('expected ok');
    const a1 = UniversalMessage.RoutableMessage.decode(f.verifier.reply(r, { payload: PAYLOAD }));
    const a2 = UniversalMessage.RoutableMessage.decode(f.verifier.reply(r, { payload: PAYLOAD }));
    expect(toHex(a1.toDestination!.routingAddress!)).toBe(toHex(c.routingAddress));
    expect(a1.fromDestination!.domain).toBe(3);
    expect(toHex(a1.requestUuid)).toBe(toHex(c.uuid));
    expect(a1.signatureData!.AES_GCM_ResponseData!.counter).toBe(1);
    expect(a2.signatureData!.AES_GCM_ResponseData!.counter).toBe(2);
    expect(s.openResponse(UniversalMessage.RoutableMessage.encode(a2).finish(), c.pending).kind).toBe('ok');
    expect(s.openResponse(UniversalMessage.RoutableMessage.encode(a1).finish(), c.pending).kind).toBe('ok');
  });

  it('is deterministic under injected clock and randomness', () => {
    const run = () => {
      const f = fixture({ seed: 'd' });
      const s = f.handshake();
      return toHex(f.verifier.handle(sign(s, f).bytes, () => ({ payload: PAYLOAD }))!);
    };
    expect(run()).toBe(run());
  });

  it('vehicle clock follows the injected clock from the configured clock_time', () => {
    const f = fixture();
    expect(f.handshake().vin).toBe(VIN);
    expect(f.verifier.clockTime()).toBe(1000);
    f.clock.t = T0 + 2_500;
    expect(f.verifier.clockTime()).toBe(1002);
  });
});
