import { describe, expect, it } from 'vitest';
import {
  buildSessionInfoRequest,
  deriveSessionKey,
  encodeSessionInfo,
  FLAG_ENCRYPT_RESPONSE_MASK,
  fromHex,
  openSessionInfoResponse,
  publicKeyFromScalar,
  Session,
  SessionKeys,
  toHex,
} from '../../../src/crypto/index.js';
import { Signatures, UniversalMessage } from '../../../src/protocol/pb.js';
import { EPOCH, fixture, T0, VIN } from './fixture.js';
import { seededRandom, SIGNER_SCALAR, testKey, VERIFIER_SCALAR } from './helpers.js';

const Fault = UniversalMessage.MessageFault_E;
const PAYLOAD = fromHex('120452020801');

/** A correctly tagged SessionInfo for the fixture's client key (to drive adopt). */
function craftInfo(f: { counter: number; clockTime: number; epoch?: Uint8Array; publicKey?: Uint8Array; status?: number }, challenge: Uint8Array) {
  const vehiclePub = publicKeyFromScalar(fromHex(VERIFIER_SCALAR));
  const K = deriveSessionKey(fromHex(SIGNER_SCALAR), vehiclePub);
  const sessionInfoBytes = encodeSessionInfo({
    counter: f.counter,
    clockTime: f.clockTime,
    epoch: f.epoch ?? EPOCH,
    publicKey: f.publicKey ?? vehiclePub,
    status: f.status ?? 0,
  });
  return { sessionInfoBytes, tag: SessionKeys.fromSharedKey(K).sessionInfoTag(VIN, challenge, sessionInfoBytes) };
}

describe('handshake', () => {
  it('builds the documented request shape and creates an authenticated session', () => {
    const f = fixture();
    const req = buildSessionInfoRequest({ domain: 3, publicKey: f.key.publicKey, random: seededRandom('x') });
    const m = UniversalMessage.RoutableMessage.decode(req.bytes);
    expect(m.toDestination?.domain).toBe(3);
    expect(toHex(m.fromDestination!.routingAddress!)).toBe(toHex(req.routingAddress));
    expect(toHex(m.sessionInfoRequest!.publicKey!)).toBe(toHex(f.key.publicKey));
    expect(toHex(m.uuid)).toBe(toHex(req.uuid));
    expect(req.uuid.length).toBe(16);
    expect(req.routingAddress.length).toBe(16);

    const s = f.handshake();
    expect(s.counter).toBe(0);
    expect(toHex(s.epoch)).toBe(toHex(EPOCH));
    expect(s.vehicleTime(T0)).toBe(1000);
    expect(s.vehicleTime(T0 + 5_500)).toBe(1005);
  });

  it('rejects session info with a flipped tag bit, another challenge or another VIN', () => {
    const f = fixture();
    const req = buildSessionInfoRequest({ domain: 3, publicKey: f.key.publicKey, random: f.clientRandom });
    const a = openSessionInfoResponse(f.verifier.handle(req.bytes, () => ({}))!, req);
    if (a.kind !== 'session_info') throw new Error('expected session info');
    const base = { key: f.key, vin: VIN, domain: 3, challenge: req.uuid, sessionInfoBytes: a.sessionInfoBytes, tag: a.tag, now: T0 };
    expect(() => Session.fromHandshake(base)).not.toThrow();
    const tag = a.tag.slice();
    tag[31] = tag[31]! ^ 1;
    expect(() => Session.fromHandshake({ ...base, tag })).toThrow(expect.objectContaining({ code: 'bad_vehicle_response' }));
    const challenge = req.uuid.slice();
    challenge[0] = challenge[0]! ^ 1;
    expect(() => Session.fromHandshake({ ...base, challenge })).toThrow(expect.objectContaining({ code: 'bad_vehicle_response' }));
    expect(() => Session.fromHandshake({ ...base, vin: '5YJ3E1EA7KF000002' })).toThrow(
      expect.objectContaining({ code: 'bad_vehicle_response' }),
    );
    expect(() => Session.fromHandshake({ ...base, sessionInfoBytes: fromHex('ff') })).toThrow(
      expect.objectContaining({ code: 'bad_vehicle_response' }),
    );
  });

  it('an unknown key gets UNKNOWN_KEY_ID; a tagged KEY_NOT_ON_WHITELIST status throws key_not_paired', () => {
    const f = fixture({ enrolled: false });
    const req = buildSessionInfoRequest({ domain: 3, publicKey: f.key.publicKey, random: f.clientRandom });
    const a = openSessionInfoResponse(f.verifier.handle(req.bytes, () => ({}))!, req);
    expect(a).toEqual({ kind: 'fault', fault: Fault.MESSAGEFAULT_ERROR_UNKNOWN_KEY_ID, operationStatus: 2 });

    const challenge = fromHex('0102');
    const info = craftInfo({ counter: 0, clockTime: 1, status: Signatures.Session_Info_Status.SESSION_INFO_STATUS_KEY_NOT_ON_WHITELIST }, challenge);
    expect(() => Session.fromHandshake({ key: f.key, vin: VIN, domain: 3, challenge, ...info, now: T0 })).toThrow(
      expect.objectContaining({ code: 'key_not_paired' }),
    );
  });

  it('ignores answers for another routing address or request uuid', () => {
    const f = fixture();
    const req = buildSessionInfoRequest({ domain: 3, publicKey: f.key.publicKey, random: f.clientRandom });
    const other = buildSessionInfoRequest({ domain: 3, publicKey: f.key.publicKey, random: f.clientRandom });
    const answer = f.verifier.handle(req.bytes, () => ({}))!;
    expect(openSessionInfoResponse(answer, other)).toEqual({ kind: 'ignored', reason: 'not_for_this_request' });
    expect(openSessionInfoResponse(fromHex('ffff'), req)).toEqual({ kind: 'ignored', reason: 'malformed' });
  });
});

describe('signCommand', () => {
  it('produces the documented message shape and increments the counter on every call', () => {
    const f = fixture();
    const s = f.handshake();
    const random = seededRandom('sign');
    const c1 = s.signCommand(PAYLOAD, { expiresInSec: 10, now: T0 + 2_000, random });
    const m = UniversalMessage.RoutableMessage.decode(c1.bytes);
    expect(m.toDestination?.domain).toBe(3);
    expect(toHex(m.fromDestination!.routingAddress!)).toBe(toHex(c1.routingAddress));
    expect(toHex(m.uuid)).toBe(toHex(c1.uuid));
    expect(m.flags & FLAG_ENCRYPT_RESPONSE_MASK).toBe(FLAG_ENCRYPT_RESPONSE_MASK);
    expect(toHex(m.protobufMessageAsBytes!)).toBe(toHex(PAYLOAD));
    expect(toHex(m.signatureData!.signerIdentity!.publicKey!)).toBe(toHex(f.key.publicKey));
    const h = m.signatureData!.HMAC_PersonalizedData!;
    expect(toHex(h.epoch!)).toBe(toHex(EPOCH));
    expect(h.counter).toBe(1);
    expect(h.expiresAt).toBe(1012); // vehicle clock 1000 + 2 s elapsed + 10 s
    expect(h.tag!.length).toBe(32);
    expect(c1.counter).toBe(1);
    expect(c1.expiresAt).toBe(1012);
    expect(c1.requestHash[0]).toBe(8);
    expect(toHex(c1.requestHash.subarray(1))).toBe(toHex(h.tag!));

    const c2 = s.signCommand(PAYLOAD, { expiresInSec: 10, now: T0 + 2_000, random });
    expect(c2.counter).toBe(2);
    expect(toHex(c2.uuid)).not.toBe(toHex(c1.uuid));
    expect(s.counter).toBe(2);
  });

  it('is deterministic under injected clock and randomness', () => {
    const run = () => {
      const s = fixture({ seed: 'same' }).handshake();
      return toHex(s.signCommand(PAYLOAD, { expiresInSec: 10, now: T0, random: seededRandom('r') }).bytes);
    };
    expect(run()).toBe(run());
    const s = fixture({ seed: 'same' }).handshake();
    const other = toHex(s.signCommand(PAYLOAD, { expiresInSec: 10, now: T0, random: seededRandom('r2') }).bytes);
    expect(other).not.toBe(run());
  });

  it('refuses to sign once the counter is exhausted', () => {
    const f = fixture();
    const s = f.handshake();
    const challenge = fromHex('aa');
    const r = s.adopt({ challenge, ...craftInfo({ counter: 0xffffffff, clockTime: 1000, epoch: fromHex('ff'.repeat(16)) }, challenge), now: T0 });
    expect(r).toEqual({ adopted: true, epochChanged: true });
    expect(() => s.signCommand(PAYLOAD, { expiresInSec: 10, now: T0, random: f.clientRandom })).toThrow(
      expect.objectContaining({ code: 'session_resync_required', temporary: true }),
    );
  });
});

describe('openResponse', () => {
  it('decrypts the encrypted answer and rejects replays, tampering and foreign answers', () => {
    const f = fixture();
    const s = f.handshake();
    const cmd = s.signCommand(PAYLOAD, { expiresInSec: 10, now: T0, random: f.clientRandom });
    const answer = f.verifier.handle(cmd.bytes, (c) => ({ payload: fromHex('cafe' + toHex(c.payload)) }))!;
    const wire = UniversalMessage.RoutableMessage.decode(answer);
    expect(wire.signatureData?.AES_GCM_ResponseData).toBeTruthy();
    expect(toHex(wire.protobufMessageAsBytes!)).not.toContain('cafe');

    // decode() returns views into its input (and encode() gives a Buffer, whose slice() is a
    // view too): decode a real copy before mutating.
    const tampered = UniversalMessage.RoutableMessage.decode(new Uint8Array(answer));
    tampered.protobufMessageAsBytes![0] = tampered.protobufMessageAsBytes![0]! ^ 1;
    expect(s.openResponse(UniversalMessage.RoutableMessage.encode(tampered).finish(), cmd.pending)).toEqual({
      kind: 'ignored',
      reason: 'undecryptable',
    });

    const opened = s.openResponse(answer, cmd.pending);
    expect(opened).toMatchObject({ kind: 'ok', encrypted: true, counter: 1 });
    expect(opened.kind === 'ok' && toHex(opened.payload)).toBe('cafe' + toHex(PAYLOAD));
    expect(s.openResponse(answer, cmd.pending)).toEqual({ kind: 'ignored', reason: 'replayed' });

    const other = s.signCommand(PAYLOAD, { expiresInSec: 10, now: T0, random: f.clientRandom });
    expect(s.openResponse(answer, other.pending)).toEqual({ kind: 'ignored', reason: 'not_for_this_request' });
    // Same addressing but another request's hash: the AES-GCM AAD no longer matches.
    expect(s.openResponse(answer, { ...cmd.pending, requestHash: other.requestHash, responses: other.pending.responses })).toEqual({
      kind: 'ignored',
      reason: 'undecryptable',
    });
  });

  it('accepts a plaintext answer (older firmware ignores FLAG_ENCRYPT_RESPONSE)', () => {
    const f = fixture();
    const s = f.handshake();
    const cmd = s.signCommand(PAYLOAD, { expiresInSec: 10, now: T0, random: f.clientRandom });
    const v = f.verifier.verifyCommand(cmd.bytes);
    if (!v.ok) throw new Error('expected ok');
    const answer = f.verifier.reply({ ...v, encryptResponse: false }, { payload: fromHex('0102') });
    const r = s.openResponse(answer, cmd.pending);
    expect(r).toMatchObject({ kind: 'ok', encrypted: false });
    expect(r.kind === 'ok' && toHex(r.payload)).toBe('0102');
  });

  it('refuses a plaintext result once the vehicle has encrypted an answer (downgrade), also after a reload', () => {
    const f = fixture();
    const s = f.handshake();
    const plainAnswer = (cmd: ReturnType<typeof s.signCommand>): Uint8Array => {
      const v = f.verifier.verifyCommand(cmd.bytes);
      if (!v.ok) throw new Error('expected ok');
      return f.verifier.reply({ ...v, encryptResponse: false }, { payload: fromHex('0102') });
    };
    // First an encrypted answer: from now on this vehicle is known to encrypt.
    const first = s.signCommand(PAYLOAD, { expiresInSec: 10, now: T0, random: f.clientRandom });
    expect(s.openResponse(f.verifier.handle(first.bytes, () => ({}))!, first.pending)).toMatchObject({ kind: 'ok', encrypted: true });
    // The same plaintext answer that a fresh session accepts (test above) is now refused.
    const second = s.signCommand(PAYLOAD, { expiresInSec: 10, now: T0, random: f.clientRandom });
    expect(s.openResponse(plainAnswer(second), second.pending)).toEqual({ kind: 'ignored', reason: 'downgraded' });
    // Persisted: a session restored from the store keeps refusing.
    const restored = Session.fromJSON(JSON.parse(JSON.stringify(s)), f.key);
    const third = restored.signCommand(PAYLOAD, { expiresInSec: 10, now: T0, random: f.clientRandom });
    expect(restored.openResponse(plainAnswer(third), third.pending)).toEqual({ kind: 'ignored', reason: 'downgraded' });
    // Plaintext faults still get through (they only lead to a resync, never to a result).
    const fourth = restored.signCommand(PAYLOAD, { expiresInSec: 10, now: T0, random: f.clientRandom });
    const v = f.verifier.verifyCommand(fourth.bytes);
    if (!v.ok) throw new Error('expected ok');
    const fault = f.verifier.reply({ ...v, encryptResponse: false }, { fault: Fault.MESSAGEFAULT_ERROR_BUSY });
    expect(restored.openResponse(fault, fourth.pending)).toMatchObject({ kind: 'fault', fault: Fault.MESSAGEFAULT_ERROR_BUSY });
  });

  it('surfaces an authenticated fault inside an encrypted answer', () => {
    const f = fixture();
    const s = f.handshake();
    const cmd = s.signCommand(PAYLOAD, { expiresInSec: 10, now: T0, random: f.clientRandom });
    const answer = f.verifier.handle(cmd.bytes, () => ({ fault: Fault.MESSAGEFAULT_ERROR_BUSY }))!;
    expect(s.openResponse(answer, cmd.pending)).toMatchObject({ kind: 'fault', fault: Fault.MESSAGEFAULT_ERROR_BUSY, encrypted: true });
    // The fault is in the AAD: rewriting it breaks decryption.
    const m = UniversalMessage.RoutableMessage.decode(new Uint8Array(answer));
    m.signedMessageStatus!.signedMessageFault = Fault.MESSAGEFAULT_ERROR_NONE;
    const cmd2 = { ...cmd.pending, responses: new (cmd.pending.responses.constructor as any)() };
    expect(s.openResponse(UniversalMessage.RoutableMessage.encode(m).finish(), cmd2)).toEqual({ kind: 'ignored', reason: 'undecryptable' });
  });
});

describe('resync (adopt)', () => {
  it('recovers from a vehicle reboot via the session info attached to the fault', () => {
    const f = fixture();
    const s = f.handshake();
    for (let i = 0; i < 3; i++) {
      const c = s.signCommand(PAYLOAD, { expiresInSec: 10, now: T0, random: f.clientRandom });
      expect(s.openResponse(f.verifier.handle(c.bytes, () => ({}))!, c.pending).kind).toBe('ok');
    }
    f.clock.t += 60_000;
    f.verifier.rotateEpoch(); // reboot: new epoch, clock restarts, counters reset
    const c = s.signCommand(PAYLOAD, { expiresInSec: 10, now: f.clock.t, random: f.clientRandom });
    const r = s.openResponse(f.verifier.handle(c.bytes, () => ({}))!, c.pending);
    if (r.kind !== 'fault' || !r.sessionInfo) throw new Error(`expected fault with session info, got ${JSON.stringify(r)}`);
    expect(r.fault).toBe(Fault.MESSAGEFAULT_ERROR_INCORRECT_EPOCH);
    expect(s.adopt({ challenge: c.uuid, ...r.sessionInfo, now: f.clock.t })).toEqual({ adopted: true, epochChanged: true });
    expect(s.counter).toBe(0);
    expect(s.vehicleTime(f.clock.t)).toBe(0);
    const again = s.signCommand(PAYLOAD, { expiresInSec: 10, now: f.clock.t, random: f.clientRandom });
    expect(s.openResponse(f.verifier.handle(again.bytes, () => ({}))!, again.pending).kind).toBe('ok');
  });

  it('discards mis-tagged info, foreign keys and stale clocks; never rolls the counter back within an epoch', () => {
    const f = fixture();
    const s = f.handshake();
    const ch = fromHex('c0ffee');
    // counter moves up within the same epoch
    expect(s.adopt({ challenge: ch, ...craftInfo({ counter: 50, clockTime: 1010 }, ch), now: T0 + 10_000 })).toEqual({
      adopted: true,
      epochChanged: false,
    });
    expect(s.counter).toBe(50);
    // lower counter, later clock: clock adopted, counter kept
    expect(s.adopt({ challenge: ch, ...craftInfo({ counter: 10, clockTime: 1020 }, ch), now: T0 + 20_000 }).adopted).toBe(true);
    expect(s.counter).toBe(50);
    // earlier clock in the same epoch: discarded entirely
    expect(s.adopt({ challenge: ch, ...craftInfo({ counter: 99, clockTime: 1015 }, ch), now: T0 + 21_000 })).toEqual({
      adopted: false,
      reason: 'stale_clock',
    });
    expect(s.counter).toBe(50);
    // bad tag
    const good = craftInfo({ counter: 99, clockTime: 1030 }, ch);
    const badTag = good.tag.slice();
    badTag[0] = badTag[0]! ^ 1;
    expect(s.adopt({ challenge: ch, sessionInfoBytes: good.sessionInfoBytes, tag: badTag, now: T0 })).toEqual({ adopted: false, reason: 'bad_tag' });
    expect(s.adopt({ challenge: fromHex('00'), ...good, now: T0 })).toEqual({ adopted: false, reason: 'bad_tag' });
    // tag valid under our K but naming another vehicle key
    const foreign = craftInfo({ counter: 1, clockTime: 2000, publicKey: testKey('01'.repeat(32)).publicKey }, ch);
    expect(s.adopt({ challenge: ch, ...foreign, now: T0 })).toEqual({ adopted: false, reason: 'key_mismatch' });
    // new epoch with a lower counter and clock: reset
    expect(s.adopt({ challenge: ch, ...craftInfo({ counter: 3, clockTime: 5, epoch: fromHex('ab'.repeat(16)) }, ch), now: T0 })).toEqual({
      adopted: true,
      epochChanged: true,
    });
    expect(s.counter).toBe(3);
    expect(toHex(s.epoch)).toBe('ab'.repeat(16));
  });
});

describe('persistence', () => {
  it('round-trips through JSON without K or private material and keeps working', () => {
    const f = fixture();
    const s = f.handshake();
    s.signCommand(PAYLOAD, { expiresInSec: 10, now: T0, random: f.clientRandom });
    const json = JSON.stringify(s);
    const K = deriveSessionKey(fromHex(SIGNER_SCALAR), publicKeyFromScalar(fromHex(VERIFIER_SCALAR)));
    expect(json).not.toContain(toHex(K));
    expect(json).not.toContain(toHex(SessionKeys.fromSharedKey(K).commandKey));
    expect(json).not.toContain(SIGNER_SCALAR);
    expect(json.length).toBeLessThan(1024);

    const restored = Session.fromJSON(JSON.parse(json), f.key);
    expect(restored.counter).toBe(1);
    expect(restored.clockOffsetMs).toBe(s.clockOffsetMs);
    const c = restored.signCommand(PAYLOAD, { expiresInSec: 10, now: T0 + 1000, random: f.clientRandom });
    expect(c.counter).toBe(2);
    expect(restored.openResponse(f.verifier.handle(c.bytes, () => ({}))!, c.pending).kind).toBe('ok');

    expect(() => Session.fromJSON(JSON.parse(json), testKey('02'.repeat(32)))).toThrow(
      expect.objectContaining({ code: 'invalid_session_state' }),
    );
    expect(() => Session.fromJSON({ ...JSON.parse(json), epoch: 'zz' }, f.key)).toThrow(
      expect.objectContaining({ code: 'invalid_session_state' }),
    );
    expect(() => Session.fromJSON({ ...JSON.parse(json), counter: -1 }, f.key)).toThrow(
      expect.objectContaining({ code: 'invalid_session_state' }),
    );
  });
});
