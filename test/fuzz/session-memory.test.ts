/**
 * Regression test for the compact session layout (one region per session carved from a
 * shared slab, bench target ≤ 1 KB per cached session): many sessions live side by side in
 * the same slabs, and signing, resynchronizing to a new epoch (which rewrites a session's
 * bytes in place) and serializing one session never disturbs its neighbours. Every check
 * is against independent vehicle-side verifiers.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Session, buildSessionInfoRequest, openSessionInfoResponse } from '../../src/crypto/session.js';
import { DomainVerifier } from '../../src/crypto/verifier.js';
import { LocalKey } from '../../src/keys/index.js';
import { UniversalMessage } from '../../src/protocol/pb.js';
import { MemorySessionStore } from '../../src/session/store.js';

let draws = 0;
const random = (n: number): Uint8Array => {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i += 32) out.set(createHash('sha256').update(`session-memory-${draws++}`).digest().subarray(0, n - i), i);
  return out;
};
const NOW = 1_700_000_000_000;
const client = LocalKey.fromScalar(Uint8Array.from({ length: 32 }, (_, i) => 90 - i));
const PAYLOAD = new Uint8Array([0x0a, 0x02, 0x08, 0x01]);

interface Car {
  vin: string;
  verifier: DomainVerifier<true>;
}

function vehicle(i: number): Car {
  const vin = `5YJ3SLAB${String(i).padStart(9, '0')}`;
  const scalar = createHash('sha256').update(`vehicle-${i}`).digest();
  const verifier = new DomainVerifier<true>({
    privateScalar: new Uint8Array(scalar),
    domain: 3,
    vin,
    now: () => NOW,
    random,
    lookup: (pub) => (Buffer.from(pub).equals(Buffer.from(client.publicKey)) ? true : undefined),
  });
  return { vin, verifier };
}

function handshake(car: Car): Session {
  const req = buildSessionInfoRequest({ domain: 3, publicKey: client.publicKey, random });
  const a = openSessionInfoResponse(car.verifier.answerSessionInfoRequest(UniversalMessage.RoutableMessage.decode(req.bytes))!, req);
  if (a.kind !== 'session_info') throw new Error('handshake failed');
  return Session.fromHandshake({ key: client, vin: car.vin, domain: 3, challenge: req.uuid, ...a, now: NOW });
}

/** Signs one command and returns the vehicle's verdict (fault 0 = accepted). */
function send(s: Session, car: Car): { fault: number; answer: Uint8Array; pending: ReturnType<Session['signCommand']> } {
  const signed = s.signCommand(PAYLOAD, { expiresInSec: 30, now: NOW, random });
  const answer = car.verifier.handle(signed.bytes, () => ({ payload: new Uint8Array() }))!;
  const m = UniversalMessage.RoutableMessage.decode(answer);
  return { fault: m.signedMessageStatus?.signedMessageFault ?? 0, answer, pending: signed };
}

describe('compact session layout', () => {
  it('neighbouring sessions stay independent through signing, epoch changes and JSON round trips', () => {
    const cars = Array.from({ length: 120 }, (_, i) => vehicle(i));
    const store = new MemorySessionStore<Session>(1000);
    for (const car of cars) store.set(car.vin, 3, handshake(car));
    const before = new Map(cars.map((c) => [c.vin, store.get(c.vin, 3)!.toJSON()]));

    for (const car of cars) expect(send(store.get(car.vin, 3)!, car).fault).toBe(0);

    // Reboot every third vehicle: the next command is refused with session info, the
    // session adopts the new epoch in place, and the resend is accepted.
    for (const [i, car] of cars.entries()) {
      if (i % 3 !== 0) continue;
      car.verifier.rotateEpoch();
      const s = store.get(car.vin, 3)!;
      const r = send(s, car);
      expect(r.fault).not.toBe(0);
      const opened = s.openResponse(r.answer, r.pending.pending);
      expect(opened.kind).toBe('fault');
      if (opened.kind !== 'fault' || !opened.sessionInfo) throw new Error('expected session info with the fault');
      expect(s.adopt({ challenge: r.pending.uuid, ...opened.sessionInfo, now: NOW })).toEqual({ adopted: true, epochChanged: true });
      expect(Buffer.from(s.epoch).equals(Buffer.from(car.verifier.epoch))).toBe(true);
    }

    for (const [i, car] of cars.entries()) {
      const s = store.get(car.vin, 3)!;
      expect(send(s, car).fault).toBe(0);
      const j = s.toJSON();
      const b = before.get(car.vin)!;
      expect(j.vehiclePublicKey).toBe(b.vehiclePublicKey);
      if (i % 3 === 0) expect(j.epoch).not.toBe(b.epoch);
      else expect(j.epoch).toBe(b.epoch);
      // A restored copy signs what the vehicle accepts, and does not share bytes with the original.
      const copy = Session.fromJSON(j, client);
      expect(send(copy, car).fault).toBe(0);
      expect(Buffer.from(copy.vehiclePublicKey).equals(Buffer.from(s.vehiclePublicKey))).toBe(true);
    }
  });

  it('public getters hand out copies, never views into shared memory', () => {
    const car = vehicle(999);
    const s = handshake(car);
    const epoch = s.epoch;
    epoch.fill(0);
    s.vehiclePublicKey.fill(0);
    expect(send(s, car).fault).toBe(0);
    expect(epoch.buffer.byteLength).toBe(16);
  });
});
