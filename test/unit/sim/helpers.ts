/**
 * Test client for the simulator: a real client Session (src/crypto) signing commands with
 * a LocalKey (src/keys), talking to a vehicle in process or over the app.
 */
import { randomBytes } from 'node:crypto';
import { buildSessionInfoRequest, openSessionInfoResponse, Session, type SignedCommand } from '../../../src/crypto/index.js';
import { generateKeyPair, loadKeyFromPem, type LocalKey } from '../../../src/keys/index.js';
import { CarServer, UniversalMessage, VCSEC } from '../../../src/protocol/pb.js';
import { createSimApp, Sim, type SimOptions } from '../../../src/sim/index.js';

export const random = (n: number): Uint8Array => new Uint8Array(randomBytes(n));
export const VCSEC_DOMAIN = 2;
export const INFO_DOMAIN = 3;
export const AUTH = { authorization: 'Bearer test-token', 'content-type': 'application/json' };

export function newKey(): LocalKey {
  return loadKeyFromPem(generateKeyPair().privatePem);
}

export function makeSim(opts: SimOptions & { owner?: LocalKey; driver?: LocalKey } = {}) {
  const owner = opts.owner ?? newKey();
  const enroll = [{ publicKey: owner.publicKey, role: 'owner' as const }];
  if (opts.driver) enroll.push({ publicKey: opts.driver.publicKey, role: 'driver' as never });
  const sim = new Sim({ limits: false, ...opts, enroll: [...enroll, ...(opts.enroll ?? [])] });
  const app = createSimApp(sim);
  return { sim, app, owner };
}

/** Sends a RoutableMessage through POST signed_command; returns the decoded answer bytes. */
export async function sendRoutable(app: ReturnType<typeof createSimApp>, vin: string, bytes: Uint8Array): Promise<{ status: number; body: any; answer?: Uint8Array }> {
  const res = await app.request(`/api/1/vehicles/${vin}/signed_command`, {
    method: 'POST',
    headers: AUTH,
    body: JSON.stringify({ routable_message: Buffer.from(bytes).toString('base64') }),
  });
  const body = (await res.json()) as any;
  return {
    status: res.status,
    body,
    ...(typeof body.response === 'string' ? { answer: new Uint8Array(Buffer.from(body.response, 'base64')) } : {}),
  };
}

export async function handshake(app: ReturnType<typeof createSimApp>, key: LocalKey, vin: string, domain: number): Promise<Session> {
  const req = buildSessionInfoRequest({ domain, publicKey: key.publicKey, random });
  const r = await sendRoutable(app, vin, req.bytes);
  if (!r.answer) throw new Error(`handshake failed: ${r.status} ${JSON.stringify(r.body)}`);
  const a = openSessionInfoResponse(r.answer, req);
  if (a.kind !== 'session_info') throw new Error(`handshake answer: ${JSON.stringify(a)}`);
  return Session.fromHandshake({ key, vin, domain, challenge: req.uuid, sessionInfoBytes: a.sessionInfoBytes, tag: a.tag, now: Date.now() });
}

export function sign(session: Session, payload: Uint8Array, o: { expiresInSec?: number; method?: 'hmac' | 'aes-gcm' } = {}): SignedCommand {
  return session.signCommand(payload, { expiresInSec: o.expiresInSec ?? 15, now: Date.now(), random, ...(o.method ? { method: o.method } : {}) });
}

export const lockPayload = (): Uint8Array => VCSEC.UnsignedMessage.encode({ RKEAction: 1 }).finish();
export const unlockPayload = (): Uint8Array => VCSEC.UnsignedMessage.encode({ RKEAction: 0 }).finish();
export const action = (vehicleAction: Record<string, unknown>): Uint8Array => CarServer.Action.encode({ vehicleAction }).finish();

export function decode(bytes: Uint8Array): UniversalMessage.RoutableMessage {
  return UniversalMessage.RoutableMessage.decode(bytes);
}
export function encode(m: UniversalMessage.RoutableMessage): Uint8Array {
  return UniversalMessage.RoutableMessage.encode(m).finish();
}
export function faultOf(answer: Uint8Array | undefined): number {
  if (!answer) return -1;
  return decode(answer).signedMessageStatus?.signedMessageFault ?? 0;
}

/** Opens the vehicle's answer with the client session; returns the CarServer.Response (infotainment). */
export function openCarServer(session: Session, cmd: SignedCommand, answer: Uint8Array) {
  const o = session.openResponse(answer, cmd.pending);
  if (o.kind !== 'ok') throw new Error(`answer not ok: ${JSON.stringify(o)}`);
  return { opened: o, response: CarServer.Response.decode(o.payload) };
}

/** Runs one infotainment action end to end; returns {result, reason} or the fault. */
export async function runAction(app: ReturnType<typeof createSimApp>, session: Session, vin: string, vehicleAction: Record<string, unknown>) {
  const cmd = sign(session, action(vehicleAction));
  const r = await sendRoutable(app, vin, cmd.bytes);
  if (!r.answer) throw new Error(`no answer: ${r.status} ${JSON.stringify(r.body)}`);
  const o = session.openResponse(r.answer, cmd.pending);
  if (o.kind === 'fault') return { fault: o.fault } as const;
  if (o.kind !== 'ok') throw new Error(`ignored answer: ${o.reason}`);
  const resp = CarServer.Response.decode(o.payload);
  return {
    result: (resp.actionStatus?.result ?? 0) === 0,
    reason: resp.actionStatus?.resultReason?.plainText ?? '',
    encrypted: o.encrypted,
  } as const;
}

export async function vehicleData(app: ReturnType<typeof createSimApp>, vin: string, query = ''): Promise<any> {
  const res = await app.request(`/api/1/vehicles/${vin}/vehicle_data${query}`, { headers: AUTH });
  return { status: res.status, body: (await res.json()) as any, headers: res.headers };
}
