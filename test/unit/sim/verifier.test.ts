/**
 * The simulated vehicle rejects every one-field corruption of a valid signed command with
 * the protocol's fault, executes nothing when it does, and attaches session info a correct
 * client can resync from. Commands are signed with the real client Session (src/crypto).
 */
import { describe, expect, test } from 'vitest';
import { UniversalMessage } from '../../../src/protocol/pb.js';
import { DEFAULT_FLEET_VINS } from '../../../src/sim/index.js';
import {
  action,
  decode,
  encode,
  faultOf,
  handshake,
  INFO_DOMAIN,
  lockPayload,
  makeSim,
  newKey,
  runAction,
  sendRoutable,
  sign,
  VCSEC_DOMAIN,
} from './helpers.js';
import { buildSessionInfoRequest, openSessionInfoResponse } from '../../../src/crypto/index.js';
import { random } from './helpers.js';

const F = UniversalMessage.MessageFault_E;
const VIN = DEFAULT_FLEET_VINS.modern;
const OTHER_VIN = DEFAULT_FLEET_VINS.modern2;

async function setup() {
  const driver = newKey();
  const ctx = makeSim({ driver });
  const vcsec = await handshake(ctx.app, ctx.owner, VIN, VCSEC_DOMAIN);
  const info = await handshake(ctx.app, ctx.owner, VIN, INFO_DOMAIN);
  const executed = () => ctx.sim.log({ vin: VIN }).filter((e) => e.executed);
  return { ...ctx, driver, vcsec, info, executed };
}

type Mutator = (m: UniversalMessage.RoutableMessage) => void;
const hmac = (m: UniversalMessage.RoutableMessage) => m.signatureData!.HMAC_PersonalizedData!;

describe('one-field corruptions of a valid VCSEC lock command', () => {
  const cases: Array<[string, Mutator, number]> = [
    ['tag bit flipped', (m) => void (hmac(m).tag![0]! ^= 0x01), F.MESSAGEFAULT_ERROR_INVALID_SIGNATURE],
    ['payload bit flipped', (m) => void (m.protobufMessageAsBytes![0]! ^= 0x01), F.MESSAGEFAULT_ERROR_INVALID_SIGNATURE],
    ['other epoch', (m) => void (hmac(m).epoch![0]! ^= 0xff), F.MESSAGEFAULT_ERROR_INCORRECT_EPOCH],
    ['counter changed', (m) => void (hmac(m).counter = (hmac(m).counter ?? 0) + 5), F.MESSAGEFAULT_ERROR_INVALID_SIGNATURE],
    ['expiry changed', (m) => void (hmac(m).expiresAt = (hmac(m).expiresAt ?? 0) - 1), F.MESSAGEFAULT_ERROR_INVALID_SIGNATURE],
    ['flags changed', (m) => void (m.flags = 0), F.MESSAGEFAULT_ERROR_INVALID_SIGNATURE],
    ['expiry too far ahead', (m) => void (hmac(m).expiresAt = (hmac(m).expiresAt ?? 0) + 100_000), F.MESSAGEFAULT_ERROR_TIME_TO_LIVE_TOO_LONG],
    ['unknown domain', (m) => void (m.toDestination = { domain: 5 as UniversalMessage.Domain }), F.MESSAGEFAULT_ERROR_INVALID_DOMAINS],
    ['signer not enrolled', (m) => void (m.signatureData!.signerIdentity = { publicKey: newKey().publicKey }), F.MESSAGEFAULT_ERROR_UNKNOWN_KEY_ID],
    ['no signature data', (m) => void (m.signatureData = null), F.MESSAGEFAULT_ERROR_BAD_PARAMETER],
  ];
  for (const [name, mutate, fault] of cases) {
    test(`${name} → ${F[fault]}`, async () => {
      const { app, sim, vcsec, executed } = await setup();
      const cmd = sign(vcsec, lockPayload());
      // decode() returns views into its input: corrupt a copy, keep the original intact.
      const m = decode(Uint8Array.from(cmd.bytes));
      mutate(m);
      const r = await sendRoutable(app, VIN, encode(m));
      expect(r.status).toBe(200);
      expect(faultOf(r.answer)).toBe(fault);
      expect(sim.vehicle(VIN).state.locked).toBe(false);
      expect(executed()).toEqual([]);
      // The unmodified command still works afterwards: a forgery burnt no counter.
      const ok = await sendRoutable(app, VIN, cmd.bytes);
      expect(faultOf(ok.answer)).toBe(0);
      expect(sim.vehicle(VIN).state.locked).toBe(true);
    });
  }

  test('signed for another VIN → INVALID_SIGNATURE (the VIN is only inside the MAC)', async () => {
    const { app, owner, sim, executed } = await setup();
    const other = await handshake(app, owner, OTHER_VIN, VCSEC_DOMAIN);
    const cmd = sign(other, lockPayload());
    const r = await sendRoutable(app, VIN, cmd.bytes);
    // Epochs differ between cars, so the epoch check fires first when the epoch is sent…
    expect(faultOf(r.answer)).toBe(F.MESSAGEFAULT_ERROR_INCORRECT_EPOCH);
    // …and with the target car's epoch substituted, the VIN in the MAC is what fails.
    const m = decode(Uint8Array.from(cmd.bytes));
    hmac(m).epoch = sim.vehicle(VIN).vcsec.epoch;
    const r2 = await sendRoutable(app, VIN, encode(m));
    expect(faultOf(r2.answer)).toBe(F.MESSAGEFAULT_ERROR_INVALID_SIGNATURE);
    expect(executed()).toEqual([]);
  });

  test('addressed to the other domain → rejected (epochs and the domain in the MAC differ)', async () => {
    const { app, sim, vcsec, executed } = await setup();
    const cmd = sign(vcsec, lockPayload());
    const m = decode(Uint8Array.from(cmd.bytes));
    m.toDestination = { domain: INFO_DOMAIN };
    expect(faultOf((await sendRoutable(app, VIN, encode(m))).answer)).toBe(F.MESSAGEFAULT_ERROR_INCORRECT_EPOCH);
    hmac(m).epoch = sim.vehicle(VIN).infotainment.epoch;
    expect(faultOf((await sendRoutable(app, VIN, encode(m))).answer)).toBe(F.MESSAGEFAULT_ERROR_INVALID_SIGNATURE);
    expect(executed()).toEqual([]);
    expect(sim.vehicle(VIN).state.locked).toBe(false);
  });

  test('replayed counter → INVALID_TOKEN_OR_COUNTER, executed once', async () => {
    const { app, sim, vcsec, executed } = await setup();
    const cmd = sign(vcsec, lockPayload());
    expect(faultOf((await sendRoutable(app, VIN, cmd.bytes)).answer)).toBe(0);
    sim.vehicle(VIN).state.locked = false;
    const again = await sendRoutable(app, VIN, cmd.bytes);
    expect(faultOf(again.answer)).toBe(F.MESSAGEFAULT_ERROR_INVALID_TOKEN_OR_COUNTER);
    expect(sim.vehicle(VIN).state.locked).toBe(false);
    expect(executed()).toHaveLength(1);
  });

  test('VCSEC requires counters in order; infotainment accepts out-of-order within its window', async () => {
    const { app, sim, vcsec, info } = await setup();
    const c1 = sign(vcsec, lockPayload());
    const c2 = sign(vcsec, lockPayload());
    expect(faultOf((await sendRoutable(app, VIN, c2.bytes)).answer)).toBe(0);
    expect(faultOf((await sendRoutable(app, VIN, c1.bytes)).answer)).toBe(F.MESSAGEFAULT_ERROR_INVALID_TOKEN_OR_COUNTER);

    const i1 = sign(info, action({ vehicleControlFlashLightsAction: {} }));
    const i2 = sign(info, action({ vehicleControlHonkHornAction: {} }));
    expect(faultOf((await sendRoutable(app, VIN, i2.bytes)).answer)).toBe(0);
    expect(faultOf((await sendRoutable(app, VIN, i1.bytes)).answer)).toBe(0);
    expect(faultOf((await sendRoutable(app, VIN, i1.bytes)).answer)).toBe(F.MESSAGEFAULT_ERROR_INVALID_TOKEN_OR_COUNTER);
    const names = sim.log({ vin: VIN }).filter((e) => e.executed && e.channel === 'infotainment').map((e) => e.command);
    expect(names).toEqual(['honk_horn', 'flash_lights']);
  });

  test('expired (domain clock moved past expires_at) → TIME_EXPIRED with session info; resync then succeeds', async () => {
    const { app, sim, vcsec } = await setup();
    const cmd = sign(vcsec, lockPayload(), { expiresInSec: 10 });
    sim.skewClock(VIN, 'vcsec', 60);
    const r = await sendRoutable(app, VIN, cmd.bytes);
    expect(faultOf(r.answer)).toBe(F.MESSAGEFAULT_ERROR_TIME_EXPIRED);
    const opened = vcsec.openResponse(r.answer!, cmd.pending);
    expect(opened.kind).toBe('fault');
    if (opened.kind !== 'fault' || !opened.sessionInfo) throw new Error('expected session info');
    expect(vcsec.adopt({ challenge: cmd.uuid, ...opened.sessionInfo, now: Date.now() }).adopted).toBe(true);
    const retry = sign(vcsec, lockPayload());
    expect(faultOf((await sendRoutable(app, VIN, retry.bytes)).answer)).toBe(0);
    expect(sim.vehicle(VIN).state.locked).toBe(true);
  });

  test('after a reboot: INCORRECT_EPOCH with tagged session info, then the resynced client succeeds', async () => {
    const { app, sim, info } = await setup();
    sim.reboot(VIN, 'infotainment');
    const cmd = sign(info, action({ chargingSetLimitAction: { percent: 70 } }));
    const r = await sendRoutable(app, VIN, cmd.bytes);
    const opened = info.openResponse(r.answer!, cmd.pending);
    if (opened.kind !== 'fault' || !opened.sessionInfo) throw new Error('expected a fault with session info');
    expect(opened.fault).toBe(F.MESSAGEFAULT_ERROR_INCORRECT_EPOCH);
    expect(info.adopt({ challenge: cmd.uuid, ...opened.sessionInfo, now: Date.now() })).toEqual({ adopted: true, epochChanged: true });
    const res = await runAction(app, info, VIN, { chargingSetLimitAction: { percent: 70 } });
    expect(res).toMatchObject({ result: true });
    expect(sim.vehicle(VIN).state.chargeLimit).toBe(70);
  });

  test('handshake with a key that is not enrolled → UNKNOWN_KEY_ID, no session info', async () => {
    const { app } = await setup();
    const req = buildSessionInfoRequest({ domain: INFO_DOMAIN, publicKey: newKey().publicKey, random });
    const r = await sendRoutable(app, VIN, req.bytes);
    const a = openSessionInfoResponse(r.answer!, req);
    expect(a).toMatchObject({ kind: 'fault', fault: F.MESSAGEFAULT_ERROR_UNKNOWN_KEY_ID });
    expect(decode(r.answer!).sessionInfo?.length ?? 0).toBe(0);
  });
});

describe('answers', () => {
  test('FLAG_ENCRYPT_RESPONSE on 2024.38+ firmware: the answer is AES-GCM sealed and decrypts', async () => {
    const { app, info } = await setup();
    const res = await runAction(app, info, VIN, { vehicleControlSetSentryModeAction: { on: true } });
    expect(res).toEqual({ result: true, reason: '', encrypted: true });
    const refused = await runAction(app, info, VIN, { chargingSetLimitAction: { percent: 80 } });
    expect(refused).toEqual({ result: false, reason: 'already_set', encrypted: true });
  });

  test('getVehicleData over the signed channel answers a VehicleData subset', async () => {
    const { app, info, sim } = await setup();
    const { CarServer } = await import('../../../src/protocol/pb.js');
    sim.vehicle(VIN).state.locked = true;
    const cmd = sign(info, action({ getVehicleData: { getChargeState: {}, getClosuresState: {} } }));
    const r = await sendRoutable(app, VIN, cmd.bytes);
    const o = info.openResponse(r.answer!, cmd.pending);
    if (o.kind !== 'ok') throw new Error('expected ok');
    // Through JSON: the generated VehicleData type is too large for expect()'s inference.
    const vd = JSON.parse(JSON.stringify(CarServer.Response.decode(o.payload).vehicleData)) as {
      chargeState?: { chargeLimitSoc?: number };
      closuresState?: { locked?: boolean };
    };
    expect(vd.chargeState?.chargeLimitSoc).toBe(sim.vehicle(VIN).state.chargeLimit);
    expect(vd.closuresState?.locked).toBe(true);
  });

  test('older firmware ignores the flag and answers in plaintext', async () => {
    const { app, owner } = makeSim();
    const vin = DEFAULT_FLEET_VINS.oldFirmware;
    const s = await handshake(app, owner, vin, INFO_DOMAIN);
    const res = await runAction(app, s, vin, { vehicleControlSetSentryModeAction: { on: true } });
    expect(res).toEqual({ result: true, reason: '', encrypted: false });
  });

  test('AES-GCM-personalized commands are accepted too', async () => {
    const { app, sim, vcsec } = await setup();
    const cmd = sign(vcsec, lockPayload(), { method: 'aes-gcm' });
    const r = await sendRoutable(app, VIN, cmd.bytes);
    expect(faultOf(r.answer)).toBe(0);
    expect(vcsec.openResponse(r.answer!, cmd.pending)).toMatchObject({ kind: 'ok', encrypted: true });
    expect(sim.vehicle(VIN).state.locked).toBe(true);
  });
});

describe('roles', () => {
  test('a driver key may lock but not set a PIN to drive (INSUFFICIENT_PRIVILEGES)', async () => {
    const { app, sim, driver } = await setup();
    const dv = await handshake(app, driver, VIN, VCSEC_DOMAIN);
    const lock = sign(dv, lockPayload());
    expect(faultOf((await sendRoutable(app, VIN, lock.bytes)).answer)).toBe(0);
    const di = await handshake(app, driver, VIN, INFO_DOMAIN);
    const res = await runAction(app, di, VIN, { vehicleControlSetPinToDriveAction: { on: true, password: '1234' } });
    expect(res).toEqual({ fault: F.MESSAGEFAULT_ERROR_INSUFFICIENT_PRIVILEGES });
    expect(sim.vehicle(VIN).state.pinToDrive.pin).toBeNull();
  });

  test('a driver key cannot add keys (whitelist NO_PERMISSION_TO_ADD); an owner can', async () => {
    const { app, sim, driver, vcsec } = await setup();
    const { VCSEC } = await import('../../../src/protocol/pb.js');
    const newcomer = newKey();
    const addKey = VCSEC.UnsignedMessage.encode({
      WhitelistOperation: { addKeyToWhitelistAndAddPermissions: { key: { PublicKeyRaw: newcomer.publicKey }, keyRole: 3 }, metadataForKey: { keyFormFactor: 9 } },
    }).finish();
    const dv = await handshake(app, driver, VIN, VCSEC_DOMAIN);
    const byDriver = sign(dv, addKey);
    const r1 = await sendRoutable(app, VIN, byDriver.bytes);
    const o1 = dv.openResponse(r1.answer!, byDriver.pending);
    if (o1.kind !== 'ok') throw new Error('expected ok transport');
    expect(VCSEC.FromVCSECMessage.decode(o1.payload).commandStatus?.whitelistOperationStatus?.whitelistOperationInformation).toBe(5);
    expect(sim.vehicle(VIN).keys.size).toBe(2);
    const byOwner = sign(vcsec, addKey);
    const r2 = await sendRoutable(app, VIN, byOwner.bytes);
    const o2 = vcsec.openResponse(r2.answer!, byOwner.pending);
    if (o2.kind !== 'ok') throw new Error('expected ok');
    expect(VCSEC.FromVCSECMessage.decode(o2.payload).commandStatus?.whitelistOperationStatus?.whitelistOperationInformation ?? 0).toBe(0);
    expect(sim.vehicle(VIN).keys.size).toBe(3);
    // Removing the driver's key: its next handshake is refused.
    const remove = VCSEC.UnsignedMessage.encode({ WhitelistOperation: { removePublicKeyFromWhitelist: { PublicKeyRaw: driver.publicKey } } }).finish();
    const rm = sign(vcsec, remove);
    expect(faultOf((await sendRoutable(app, VIN, rm.bytes)).answer)).toBe(0);
    expect(sim.vehicle(VIN).keys.size).toBe(2);
    await expect(handshake(app, driver, VIN, INFO_DOMAIN)).rejects.toThrow(/fault/);
    const stale = sign(dv, lockPayload());
    expect(faultOf((await sendRoutable(app, VIN, stale.bytes)).answer)).toBe(F.MESSAGEFAULT_ERROR_UNKNOWN_KEY_ID);
  });
});
