/** A client Session talking to a DomainVerifier in memory, with an injected clock. */
import {
  buildSessionInfoRequest,
  DomainVerifier,
  fromHex,
  openSessionInfoResponse,
  Session,
  toHex,
} from '../../../src/crypto/index.js';
import { seededRandom, SIGNER_SCALAR, testKey, VERIFIER_SCALAR } from './helpers.js';

export const VIN = '5YJ3E1EA7KF000001';
export const EPOCH = fromHex('00112233445566778899aabbccddeeff');
export const T0 = 1_700_000_000_000;

export function fixture(opts: { domain?: number; vin?: string; enrolled?: boolean; seed?: string; clockTime?: number } = {}) {
  const clock = { t: T0 };
  const now = () => clock.t;
  const key = testKey(SIGNER_SCALAR);
  const enrolled = new Map<string, { role: string }>();
  if (opts.enrolled ?? true) enrolled.set(toHex(key.publicKey), { role: 'owner' });
  const vehicleRandom = seededRandom(`vehicle:${opts.seed ?? 's'}`);
  const clientRandom = seededRandom(`client:${opts.seed ?? 's'}`);
  const domain = opts.domain ?? 3;
  const verifier = new DomainVerifier({
    privateScalar: fromHex(VERIFIER_SCALAR),
    domain,
    vin: opts.vin ?? VIN,
    now,
    random: vehicleRandom,
    lookup: (pub) => enrolled.get(toHex(pub)),
    epoch: EPOCH,
    clockTime: opts.clockTime ?? 1000,
  });

  function handshake(): Session {
    const req = buildSessionInfoRequest({ domain, publicKey: key.publicKey, random: clientRandom });
    const answer = verifier.handle(req.bytes, () => ({}));
    if (!answer) throw new Error('no answer');
    const a = openSessionInfoResponse(answer, req);
    if (a.kind !== 'session_info') throw new Error(`handshake failed: ${JSON.stringify(a)}`);
    return Session.fromHandshake({
      key,
      vin: VIN,
      domain,
      challenge: req.uuid,
      sessionInfoBytes: a.sessionInfoBytes,
      tag: a.tag,
      now: clock.t,
    });
  }

  return { clock, now, key, enrolled, verifier, domain, handshake, clientRandom, vehicleRandom };
}
