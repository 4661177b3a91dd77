/**
 * The simulator over real HTTP (startSim on 127.0.0.1:0): a signed lock through
 * signed_command, and wake-up of the asleep car under a time scale (no timing assertions:
 * we only poll, bounded, until the state changes).
 */
import { afterEach, describe, expect, test } from 'vitest';
import { buildSessionInfoRequest, openSessionInfoResponse, Session } from '../../src/crypto/index.js';
import { generateKeyPair, loadKeyFromPem } from '../../src/keys/index.js';
import { VCSEC } from '../../src/protocol/pb.js';
import { DEFAULT_FLEET_VINS, startSim, type RunningSim } from '../../src/sim/index.js';
import { randomBytes } from 'node:crypto';

const random = (n: number) => new Uint8Array(randomBytes(n));
const H = { authorization: 'Bearer e2e', 'content-type': 'application/json' };
let running: RunningSim | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

async function signed(url: string, vin: string, bytes: Uint8Array): Promise<Uint8Array> {
  const res = await fetch(`${url}/api/1/vehicles/${vin}/signed_command`, {
    method: 'POST',
    headers: H,
    body: JSON.stringify({ routable_message: Buffer.from(bytes).toString('base64') }),
  });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { response: string };
  return new Uint8Array(Buffer.from(body.response, 'base64'));
}

describe('simulator over HTTP', () => {
  test('handshake and a signed lock; vehicle_data shows locked', async () => {
    const key = loadKeyFromPem(generateKeyPair().privatePem);
    running = await startSim({ port: 0, enroll: [{ publicKey: key.publicKey, role: 'owner' }], limits: false });
    const vin = DEFAULT_FLEET_VINS.modern;
    const req = buildSessionInfoRequest({ domain: 2, publicKey: key.publicKey, random });
    const hs = openSessionInfoResponse(await signed(running.url, vin, req.bytes), req);
    if (hs.kind !== 'session_info') throw new Error('handshake failed');
    const session = Session.fromHandshake({ key, vin, domain: 2, challenge: req.uuid, sessionInfoBytes: hs.sessionInfoBytes, tag: hs.tag, now: Date.now() });
    const cmd = session.signCommand(VCSEC.UnsignedMessage.encode({ RKEAction: 1 }).finish(), { expiresInSec: 15, now: Date.now(), random });
    const opened = session.openResponse(await signed(running.url, vin, cmd.bytes), cmd.pending);
    expect(opened).toMatchObject({ kind: 'ok', encrypted: true });
    const vd = (await (await fetch(`${running.url}/api/1/vehicles/${vin}/vehicle_data`, { headers: H })).json()) as any;
    expect(vd.response.vehicle_state.locked).toBe(true);
    const log = (await (await fetch(`${running.url}/_sim/log`)).json()) as any;
    expect(log.response.filter((e: any) => e.executed).map((e: any) => e.command)).toEqual(['door_lock']);
  });

  test('wake_up brings the asleep car online after its (scaled) wake time; 408 until then', async () => {
    running = await startSim({ port: 0, limits: false, timeScale: 2000 }); // 10–60 s → 5–30 ms
    const vin = DEFAULT_FLEET_VINS.asleep;
    expect((await fetch(`${running.url}/api/1/vehicles/${vin}/vehicle_data`, { headers: H })).status).toBe(408);
    const w = (await (await fetch(`${running.url}/api/1/vehicles/${vin}/wake_up`, { method: 'POST', headers: H, body: '{}' })).json()) as any;
    expect(w.response.vin).toBe(vin);
    let state = w.response.state as string;
    for (let i = 0; i < 200 && state !== 'online'; i++) {
      await new Promise((r) => setTimeout(r, 10));
      state = ((await (await fetch(`${running.url}/api/1/vehicles/${vin}`, { headers: H })).json()) as any).response.state;
    }
    expect(state).toBe('online');
    expect((await fetch(`${running.url}/api/1/vehicles/${vin}/vehicle_data`, { headers: H })).status).toBe(200);
  });

  test('an offline car does not wake', async () => {
    running = await startSim({ port: 0, limits: false, timeScale: 2000, fleet: { vehicles: [{ vin: '5YJ3E1EA8MF000999', state: 'offline' }] } });
    await fetch(`${running.url}/api/1/vehicles/5YJ3E1EA8MF000999/wake_up`, { method: 'POST', headers: H, body: '{}' });
    await new Promise((r) => setTimeout(r, 60));
    const rec = (await (await fetch(`${running.url}/api/1/vehicles/5YJ3E1EA8MF000999`, { headers: H })).json()) as any;
    expect(rec.response.state).toBe('offline');
  });
});
