/**
 * The dispatcher against an in-process fake upstream (no sockets): resend rules, resync,
 * counter persistence and bounded retries.
 */
import { describe, expect, it, beforeAll } from 'vitest';
import { loadKeyFromPem } from '../../../src/keys/index.js';
import { readFileSync } from 'node:fs';
import type { CommandKey } from '../../../src/crypto/types.js';
import { Session } from '../../../src/crypto/session.js';
import { SessionDispatcher } from '../../../src/session/dispatcher.js';
import { MemorySessionStore } from '../../../src/session/store.js';
import { UpstreamRouter } from '../../../src/transport/upstream.js';
import { UniversalMessage, VCSEC } from '../../../src/protocol/pb.js';
import { VcpError } from '../../../src/protocol/errors.js';
import type { SignedCommandRequest } from '../../../src/session/types.js';
import { FakeFleet, INFO, VSEC } from '../../e2e/proxy-fake-upstream.js';

const VIN = '5YJ3E1EA7KF000001';
const F = UniversalMessage.MessageFault_E;
let key: CommandKey;

beforeAll(() => {
  key = loadKeyFromPem(readFileSync(new URL('../../../keys.example/private-key.pem', import.meta.url)));
});

// An RKE "lock" action is a valid VCSEC.UnsignedMessage for the fake vehicle.
const vcsecPayload = VCSEC.UnsignedMessage.encode({ RKEAction: VCSEC.RKEAction_E.RKE_ACTION_LOCK }).finish();
const infoPayload = new Uint8Array([0x0a, 0x00]);

function setup(opts: { maxAttempts?: number } = {}) {
  const fleet = new FakeFleet([VIN], [key.publicKey]);
  const upstream = fleet.asUpstream();
  const sessions = new MemorySessionStore<Session>();
  const sleeps: number[] = [];
  const d = new SessionDispatcher({
    key,
    upstream,
    router: new UpstreamRouter({ fixed: 'http://upstream.test', allowed: [] }),
    sessions,
    pairingUrl: 'https://pair.example/',
    developerDomain: 'partner.example',
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    ...(opts.maxAttempts ? { maxAttempts: opts.maxAttempts } : {}),
  });
  const req = (domain: 2 | 3 = VSEC, over: Partial<SignedCommandRequest> = {}): SignedCommandRequest => ({
    vin: VIN,
    name: 'test',
    domain,
    payload: domain === VSEC ? vcsecPayload : infoPayload,
    authorization: 'Bearer t',
    route: { origin: 'http://upstream.test', subject: 'sub:x' },
    deadline: Date.now() + 10_000,
    ...over,
  });
  return { fleet, upstream, sessions, d, req, sleeps };
}

describe('SessionDispatcher', () => {
  it('handshakes only the domain it needs and reuses the session', async () => {
    const { fleet, d, req } = setup();
    expect(await d.execute(req())).toEqual({ kind: 'result', result: true, reason: '' });
    expect(await d.execute(req())).toEqual({ kind: 'result', result: true, reason: '' });
    expect(fleet.handshakeCount(VIN, VSEC)).toBe(1);
    expect(fleet.handshakeCount(VIN, INFO)).toBe(0);
    expect(fleet.executed.map((e) => e.counter)).toEqual([1, 2]);
  });

  it('signs expires_at within the remaining budget on the vehicle clock', async () => {
    const { fleet, d, req, upstream } = setup();
    await d.execute(req(INFO, { deadline: Date.now() + 4_000 }));
    const last = upstream.calls.at(-1)!;
    const msg = UniversalMessage.RoutableMessage.decode(
      Buffer.from((JSON.parse(String(last.body)) as { routable_message: string }).routable_message, 'base64'),
    );
    const hm = msg.signatureData!.HMAC_PersonalizedData!;
    const clock = fleet.vehicles.get(VIN)!.verifiers[INFO]!.clockTime();
    expect(hm.expiresAt! - clock).toBeGreaterThanOrEqual(3);
    expect(hm.expiresAt! - clock).toBeLessThanOrEqual(5);
  });

  it('persists the incremented counter before the command is sent', async () => {
    const { d, req, sessions, upstream } = setup();
    await d.execute(req());
    const seen: number[] = [];
    const orig = upstream.request;
    upstream.request = async (r) => {
      seen.push(sessions.get(VIN, VSEC)!.counter);
      return orig(r);
    };
    await d.execute(req());
    expect(seen).toEqual([2]);
  });

  it('resyncs on a fault with session info (reboot) and re-signs with a fresh counter', async () => {
    const { fleet, d, req, sleeps } = setup();
    await d.execute(req());
    fleet.reboot(VIN);
    expect(await d.execute(req())).toMatchObject({ kind: 'result', result: true });
    expect(fleet.faults.map((f) => f.fault)).toEqual([F.MESSAGEFAULT_ERROR_INCORRECT_EPOCH]);
    expect(fleet.handshakeCount(VIN, VSEC)).toBe(1);
    expect(sleeps).toHaveLength(1);
    expect(fleet.counterReuse).toBe(0);
  });

  it('re-handshakes when a resync fault carries no session info', async () => {
    const { fleet, d, req } = setup();
    await d.execute(req());
    fleet.reboot(VIN);
    // The vehicle's INCORRECT_EPOCH answer loses its session info on the way back.
    const orig = fleet.handle.bind(fleet);
    let stripped = false;
    fleet.handle = (r) => {
      const a = orig(r);
      if (!stripped && typeof a === 'object' && r.path.endsWith('signed_command')) {
        const j = JSON.parse(String(a.body)) as { response: string };
        const m = UniversalMessage.RoutableMessage.decode(Buffer.from(j.response, 'base64'));
        if (m.signedMessageStatus?.signedMessageFault) {
          stripped = true;
          m.sessionInfo = new Uint8Array();
          m.signatureData = null;
          return { ...a, body: JSON.stringify({ response: Buffer.from(UniversalMessage.RoutableMessage.encode(m).finish()).toString('base64') }) };
        }
      }
      return a;
    };
    expect(await d.execute(req())).toMatchObject({ kind: 'result', result: true });
    expect(stripped).toBe(true);
    expect(fleet.handshakeCount(VIN, VSEC)).toBe(2);
  });

  it('treats an answer that does not authenticate as may-have-executed and stops', async () => {
    const { fleet, d, req } = setup({ maxAttempts: 3 });
    await d.execute(req());
    const busy = (): void => {
      fleet.inject.push({
        kind: 'answer',
        answer: {
          status: 200,
          body: JSON.stringify({
            response: Buffer.from(
              UniversalMessage.RoutableMessage.encode({
                toDestination: {},
                signedMessageStatus: { operationStatus: 2, signedMessageFault: F.MESSAGEFAULT_ERROR_BUSY },
              }).finish(),
            ).toString('base64'),
          }),
        },
      });
    };
    for (let i = 0; i < 5; i++) busy();
    // The injected answers are not addressed to our request, so they do not authenticate:
    // the dispatcher must treat that as "may have executed" and stop at once.
    const err = await d.execute(req()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VcpError);
    expect((err as VcpError).code).toBe('may_have_executed');
    expect(fleet.inject).toHaveLength(4);
  });

  it('retries a BUSY fault from the vehicle, bounded', async () => {
    const { fleet, d, req } = setup({ maxAttempts: 3 });
    await d.execute(req());
    // Wrap the vehicle: answer BUSY (a properly addressed fault) for every command.
    const orig = fleet.handle.bind(fleet);
    let busyCount = 0;
    fleet.handle = (r) => {
      const a = orig(r);
      if (typeof a !== 'object' || !r.path.endsWith('signed_command')) return a;
      const j = JSON.parse(String(a.body)) as { response: string };
      const m = UniversalMessage.RoutableMessage.decode(Buffer.from(j.response, 'base64'));
      busyCount++;
      const f = UniversalMessage.RoutableMessage.encode({
        toDestination: m.toDestination,
        fromDestination: m.fromDestination,
        requestUuid: m.requestUuid,
        signedMessageStatus: { operationStatus: 2, signedMessageFault: F.MESSAGEFAULT_ERROR_BUSY },
      }).finish();
      return { ...a, body: JSON.stringify({ response: Buffer.from(f).toString('base64') }) };
    };
    const err = await d.execute(req()).catch((e: unknown) => e);
    expect((err as VcpError).code).toBe('vehicle_busy');
    expect((err as VcpError).mayHaveSucceeded).toBe(false);
    expect(busyCount).toBe(3);
  });

  it('maps an unknown key to 403 with the pairing link', async () => {
    const { fleet, d, req } = setup();
    fleet.enrolled.clear();
    const err = (await d.execute(req()).catch((e: unknown) => e)) as VcpError;
    expect(err.status).toBe(403);
    expect(err.code).toBe('key_not_paired');
    expect(err.message).toContain('https://pair.example/_ak/partner.example');
  });

  it('does not send anything once the client is gone', async () => {
    const { d, req, upstream } = setup();
    const ac = new AbortController();
    ac.abort();
    await expect(d.execute(req(VSEC, { signal: ac.signal }))).rejects.toMatchObject({ code: 'client_closed_request' });
    expect(upstream.calls).toHaveLength(0);
  });

  it('reports an out-of-budget command as not sent', async () => {
    const { d, req, upstream } = setup();
    await expect(d.execute(req(VSEC, { deadline: Date.now() - 1 }))).rejects.toMatchObject({ mayHaveSucceeded: false });
    const commands = upstream.calls
      .map((c) => UniversalMessage.RoutableMessage.decode(Buffer.from((JSON.parse(String(c.body)) as { routable_message: string }).routable_message, 'base64')))
      .filter((m) => !m.sessionInfoRequest);
    expect(commands).toHaveLength(0);
  });

  it('remembers a VIN that answers 422 and reports it unsupported', async () => {
    const { fleet, d, req } = setup();
    fleet.unsupported.add(VIN);
    expect(await d.execute(req())).toEqual({ kind: 'unsupported' });
    expect(d.isUnsupported(VIN)).toBe(true);
  });
});
