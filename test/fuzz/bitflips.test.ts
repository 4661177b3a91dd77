/**
 * One-bit flips of any signed field of a genuine signed command are rejected by the
 * simulator's vehicle (src/sim, which verifies like a real car) — for both domains and both
 * personalization methods (HMAC, AES-GCM). The untouched message is then accepted and
 * executed exactly once, which shows the flips were rejected for being flips.
 *
 * Signed fields: destination domain, payload (plaintext or ciphertext), signer public key,
 * epoch, counter, expiry, flags, tag, and for AES-GCM the nonce. (uuid and the routing
 * address are not signed: they only route the answer.)
 */
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { planCommand } from '../../src/commands/index.js';
import { Session, buildSessionInfoRequest, openSessionInfoResponse } from '../../src/crypto/session.js';
import { LocalKey } from '../../src/keys/index.js';
import { UniversalMessage } from '../../src/protocol/pb.js';
import { Sim } from '../../src/sim/index.js';

const RUNS = Number(process.env.FUZZ_BITFLIP_RUNS ?? 300);
const VIN = '5YJ3FUZZF00000001';
const key = LocalKey.fromScalar(Uint8Array.from({ length: 32 }, (_, i) => 31 + i));
const random = (n: number): Uint8Array => new Uint8Array(randomBytes(n));

type Field = 'domain' | 'payload' | 'signer' | 'epoch' | 'counter' | 'expiresAt' | 'flags' | 'tag' | 'nonce';

function flipBit(b: Uint8Array, bit: number): Uint8Array {
  const c = Uint8Array.from(b);
  const i = Math.floor(bit / 8) % c.length;
  c[i] = c[i]! ^ (1 << bit % 8);
  return c;
}

function mutate(bytes: Uint8Array, field: Field, bit: number): Uint8Array | undefined {
  const m = UniversalMessage.RoutableMessage.decode(bytes);
  const sd = m.signatureData!;
  const p = sd.HMAC_PersonalizedData ?? sd.AES_GCM_PersonalizedData!;
  const flip32 = (v: number): number => (v ^ (1 << bit % 32)) >>> 0;
  switch (field) {
    case 'domain':
      m.toDestination!.domain = ((m.toDestination!.domain ?? 0) ^ (1 << bit % 8)) & 0xff;
      break;
    case 'payload':
      if (!m.protobufMessageAsBytes?.length) return undefined;
      m.protobufMessageAsBytes = flipBit(m.protobufMessageAsBytes, bit);
      break;
    case 'signer':
      sd.signerIdentity!.publicKey = flipBit(sd.signerIdentity!.publicKey!, bit);
      break;
    case 'epoch':
      p.epoch = flipBit(p.epoch!, bit);
      break;
    case 'counter':
      p.counter = flip32(p.counter ?? 0);
      break;
    case 'expiresAt':
      p.expiresAt = flip32(p.expiresAt ?? 0);
      break;
    case 'flags':
      m.flags = flip32(m.flags ?? 0);
      break;
    case 'tag':
      p.tag = flipBit(p.tag!, bit);
      break;
    case 'nonce': {
      const g = sd.AES_GCM_PersonalizedData;
      if (!g) return undefined;
      g.nonce = flipBit(g.nonce!, bit);
      break;
    }
  }
  return UniversalMessage.RoutableMessage.encode(m).finish();
}

describe.each([
  ['infotainment', 'set_charge_limit', { percent: 77 }],
  ['VCSEC', 'door_lock', {}],
] as const)('%s: one-bit flips of signed fields are rejected by the vehicle', (_label, name, body) => {
  it.each(['hmac', 'aes-gcm'] as const)('%s personalization', (method) => {
    const sim = new Sim({
      fleet: { vehicles: [{ vin: VIN, model: '3', year: 2023, firmware: '2024.44.25', state: 'online' }] },
      enroll: [{ publicKey: key.publicKey, role: 'owner' }],
      limits: false,
    });
    try {
      const plan = planCommand(name, body);
      if (!plan.ok || plan.plan.kind !== 'signed') throw new Error(`${name} is expected to be signed`);
      const { domain, payload } = plan.plan;
      const vehicle = sim.vehicle(VIN);
      const built = buildSessionInfoRequest({ domain, publicKey: key.publicKey, random });
      const hs = openSessionInfoResponse(vehicle.handleRoutable(built.bytes)!, built);
      if (hs.kind !== 'session_info') throw new Error('handshake failed');
      const session = Session.fromHandshake({ key, vin: VIN, domain, challenge: built.uuid, ...hs, now: Date.now() });
      const signed = session.signCommand(payload, { expiresInSec: 60, now: Date.now(), random, method });
      const executed = (): number => sim.log({ vin: VIN }).filter((e) => e.event === 'command' && e.executed).length;

      const fields: Field[] = ['domain', 'payload', 'signer', 'epoch', 'counter', 'expiresAt', 'flags', 'tag', ...(method === 'aes-gcm' ? (['nonce'] as const) : [])];
      let tried = 0;
      fc.assert(
        fc.property(fc.constantFrom(...fields), fc.nat({ max: 65 * 8 - 1 }), (field, bit) => {
          const bad = mutate(signed.bytes, field, bit);
          if (!bad) return;
          tried++;
          const answer = vehicle.handleRoutable(bad);
          expect(executed()).toBe(0);
          if (answer) {
            const m = UniversalMessage.RoutableMessage.decode(answer);
            expect(m.signedMessageStatus?.signedMessageFault ?? 0).not.toBe(0);
          }
        }),
        { numRuns: RUNS },
      );
      expect(tried).toBeGreaterThan(RUNS / 2);
      // Every field at least once, deterministically (bit 0 and the highest bit).
      for (const field of fields) {
        for (const bit of [0, 7, 31]) {
          const bad = mutate(signed.bytes, field, bit);
          if (bad) vehicle.handleRoutable(bad);
        }
      }
      expect(executed()).toBe(0);
      // The genuine message is still accepted: it was the flips that were refused.
      const ok = UniversalMessage.RoutableMessage.decode(vehicle.handleRoutable(signed.bytes)!);
      expect(ok.signedMessageStatus?.signedMessageFault ?? 0).toBe(0);
      expect(executed()).toBe(1);
    } finally {
      sim.close();
    }
  });
});
