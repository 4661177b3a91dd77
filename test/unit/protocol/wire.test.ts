/**
 * Round trips against bytes written by hand (helpers.ts fv/fl/f32 implement the wire format
 * without protobufjs), one per message family the proxy and simulator use.
 */
import { describe, expect, it } from 'vitest';
import { CarServer, Errors, Keys, Signatures, UniversalMessage, VCSEC } from '../../../src/protocol/pb.js';
import { f32, fl, fv, hex, join, str, unhex } from './helpers.js';

interface Codec<T> {
  encode(m: T): { finish(): Uint8Array };
  decode(b: Uint8Array): T;
}
function roundTrip<T>(T: Codec<T>, value: T, expected: Uint8Array): T {
  expect(hex(T.encode(value).finish())).toBe(hex(expected));
  const back = T.decode(expected);
  expect(hex(T.encode(back).finish())).toBe(hex(expected));
  return back;
}

const epoch = unhex('00112233445566778899aabbccddeeff');
const tag32 = unhex('aa'.repeat(32));
const tag16 = unhex('bb'.repeat(16));
const nonce = unhex('cc'.repeat(12));

describe('hand-derived wire bytes', () => {
  it('HMAC-personalized command: ordinary fields first, then oneofs; flags is field 52', () => {
    const msg = UniversalMessage.RoutableMessage.create({
      toDestination: { domain: UniversalMessage.Domain.DOMAIN_VEHICLE_SECURITY },
      fromDestination: { routingAddress: unhex('01'.repeat(16)) },
      protobufMessageAsBytes: unhex('1001'),
      signatureData: {
        signerIdentity: { publicKey: unhex('04'.repeat(65)) },
        HMAC_PersonalizedData: { epoch, counter: 300, expiresAt: 0x01020304, tag: tag32 },
      },
      uuid: unhex('02'.repeat(16)),
      flags: 1 << UniversalMessage.Flags.FLAG_ENCRYPT_RESPONSE,
    });
    const expected = join(
      fl(6, fv(1, 2)),
      fl(7, fl(2, unhex('01'.repeat(16)))),
      fl(51, unhex('02'.repeat(16))),
      fv(52, 2),
      fl(10, unhex('1001')),
      fl(13, fl(1, fl(1, unhex('04'.repeat(65)))), fl(8, fl(1, epoch), fv(2, 300), f32(3, 0x01020304), fl(4, tag32))),
    );
    const back = roundTrip(UniversalMessage.RoutableMessage, msg, expected);
    expect(back.signatureData?.sigType).toBe('HMAC_PersonalizedData');
    expect(back.signatureData?.HMAC_PersonalizedData?.counter).toBe(300);
    expect(back.signatureData?.HMAC_PersonalizedData?.expiresAt).toBe(0x01020304);
  });

  it('encrypted response with fault status and request uuid', () => {
    const msg = UniversalMessage.RoutableMessage.create({
      fromDestination: { domain: UniversalMessage.Domain.DOMAIN_INFOTAINMENT },
      signedMessageStatus: {
        operationStatus: UniversalMessage.OperationStatus_E.OPERATIONSTATUS_ERROR,
        signedMessageFault: UniversalMessage.MessageFault_E.MESSAGEFAULT_ERROR_INCORRECT_EPOCH,
      },
      requestUuid: unhex('03'.repeat(16)),
      protobufMessageAsBytes: unhex('deadbeef'),
      signatureData: { AES_GCM_ResponseData: { nonce, counter: 9, tag: tag16 } },
    });
    const expected = join(
      fl(7, fv(1, 3)),
      fl(12, fv(1, 2), fv(2, 15)),
      fl(50, unhex('03'.repeat(16))),
      fl(10, unhex('deadbeef')),
      fl(13, fl(9, fl(1, nonce), fv(2, 9), fl(3, tag16))),
    );
    const back = roundTrip(UniversalMessage.RoutableMessage, msg, expected);
    expect(back.signedMessageStatus?.signedMessageFault).toBe(15);
  });

  it('AES-GCM personalized data and key handle identity', () => {
    const sd = Signatures.SignatureData.create({
      signerIdentity: { handle: 7 },
      AES_GCM_PersonalizedData: { epoch, nonce, counter: 1, expiresAt: 60, tag: tag16 },
    });
    roundTrip(
      Signatures.SignatureData,
      sd,
      join(fl(1, fv(3, 7)), fl(5, fl(1, epoch), fl(2, nonce), fv(3, 1), f32(4, 60), fl(5, tag16))),
    );
  });

  it('SessionInfo with key-not-on-whitelist status and handle', () => {
    const si = Signatures.SessionInfo.create({
      counter: 1,
      publicKey: unhex('04'.repeat(65)),
      epoch,
      clockTime: 5,
      status: Signatures.Session_Info_Status.SESSION_INFO_STATUS_KEY_NOT_ON_WHITELIST,
      handle: 2,
    });
    roundTrip(
      Signatures.SessionInfo,
      si,
      join(fv(1, 1), fl(2, unhex('04'.repeat(65))), fl(3, epoch), f32(4, 5), fv(5, 1), fv(6, 2)),
    );
  });

  it('VCSEC requests: RKE lock, closure move, add key with role', () => {
    roundTrip(VCSEC.UnsignedMessage, VCSEC.UnsignedMessage.create({ RKEAction: VCSEC.RKEAction_E.RKE_ACTION_LOCK }), fv(2, 1));
    roundTrip(
      VCSEC.UnsignedMessage,
      VCSEC.UnsignedMessage.create({ RKEAction: VCSEC.RKEAction_E.RKE_ACTION_WAKE_VEHICLE }),
      fv(2, 30),
    );
    roundTrip(
      VCSEC.UnsignedMessage,
      VCSEC.UnsignedMessage.create({ closureMoveRequest: { rearTrunk: VCSEC.ClosureMoveType_E.CLOSURE_MOVE_TYPE_MOVE } }),
      fl(4, fv(5, 1)),
    );
    const key = unhex('04'.repeat(65));
    roundTrip(
      VCSEC.UnsignedMessage,
      VCSEC.UnsignedMessage.create({
        WhitelistOperation: {
          addKeyToWhitelistAndAddPermissions: { key: { PublicKeyRaw: key }, keyRole: Keys.Role.ROLE_DRIVER },
          metadataForKey: { keyFormFactor: VCSEC.KeyFormFactor.KEY_FORM_FACTOR_CLOUD_KEY },
        },
      }),
      fl(16, fl(6, fv(1, 9)), fl(5, fl(1, fl(1, key)), fv(4, 3))),
    );
  });

  it('VCSEC answers: nominal error (field 46), WAIT status, vehicle status', () => {
    roundTrip(
      VCSEC.FromVCSECMessage,
      VCSEC.FromVCSECMessage.create({ nominalError: { genericError: Errors.GenericError_E.GENERICERROR_CLOSURES_OPEN } }),
      fl(46, fv(1, 2)),
    );
    roundTrip(
      VCSEC.FromVCSECMessage,
      VCSEC.FromVCSECMessage.create({ commandStatus: { operationStatus: VCSEC.OperationStatus_E.OPERATIONSTATUS_WAIT } }),
      fl(4, fv(1, 1)),
    );
    roundTrip(
      VCSEC.FromVCSECMessage,
      VCSEC.FromVCSECMessage.create({
        vehicleStatus: {
          vehicleLockState: VCSEC.VehicleLockState_E.VEHICLELOCKSTATE_LOCKED,
          vehicleSleepStatus: VCSEC.VehicleSleepStatus_E.VEHICLE_SLEEP_STATUS_AWAKE,
        },
      }),
      fl(1, fv(2, 1), fv(3, 1)),
    );
  });

  it('CarServer actions with one- and two-byte tags', () => {
    const act = (va: CarServer.IVehicleAction) => CarServer.Action.create({ vehicleAction: va });
    roundTrip(CarServer.Action, act({ chargingSetLimitAction: { percent: 80 } }), fl(2, fl(5, fv(1, 80))));
    roundTrip(CarServer.Action, act({ setChargingAmpsAction: { chargingAmps: 16 } }), fl(2, fl(43, fv(1, 16))));
    roundTrip(CarServer.Action, act({ chargePortDoorOpen: {} }), fl(2, fl(62, new Uint8Array())));
    roundTrip(
      CarServer.Action,
      act({ chargingStartStopAction: { stop: {} } }),
      fl(2, fl(6, fl(5, new Uint8Array()))),
    );
    roundTrip(
      CarServer.Action,
      act({ setKeepAccessoryPowerModeAction: { keepAccessoryPowerMode: true } }),
      fl(2, fl(138, fv(1, 1))),
    );
    roundTrip(
      CarServer.Action,
      act({ vehicleControlTriggerHomelinkAction: { location: { latitude: 1.5, longitude: -2 } } }),
      // float 1.5 = 0x3fc00000, -2 = 0xc0000000 (fixed32 little-endian)
      fl(2, fl(33, fl(1, f32(1, 0x3fc00000), f32(2, 0xc0000000)))),
    );
    roundTrip(CarServer.Action, act({ guestModeAction: { GuestModeActive: true } }), fl(2, fl(65, fv(1, 1))));
  });

  it('64-bit fields are plain numbers (--force-number)', () => {
    const id = 1_700_000_000_123; // > 2^32: exercises the high varint bytes
    const back = roundTrip(
      CarServer.Action,
      CarServer.Action.create({ vehicleAction: { removeChargeScheduleAction: { id } } }),
      fl(2, fl(98, fv(1, BigInt(id)))),
    );
    expect(typeof back.vehicleAction?.removeChargeScheduleAction?.id).toBe('number');
    expect(back.vehicleAction?.removeChargeScheduleAction?.id).toBe(id);
  });

  it('VehicleAction knows every action the protocol defines (no member decodes as unknown)', () => {
    // Field numbers of the VehicleAction oneof in the reference car_server.proto (60 members).
    const ids = [
      1, 5, 6, 7, 8, 9, 10, 12, 13, 14, 15, 16, 17, 18, 19, 20, 23, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35,
      36, 41, 42, 43, 44, 46, 48, 49, 50, 54, 61, 62, 65, 66, 72, 77, 78, 79, 89, 97, 98, 99, 100, 107, 108,
      109, 110, 111, 112, 113, 130, 138,
    ];
    expect(ids).toHaveLength(60);
    const seen = new Set<string>();
    for (const id of ids) {
      const va = CarServer.VehicleAction.decode(fl(id, new Uint8Array()));
      expect(va.vehicleActionMsg, `field ${id}`).toBeTruthy();
      expect(va.$unknowns, `field ${id}`).toBeUndefined();
      seen.add(va.vehicleActionMsg!);
    }
    expect(seen.size).toBe(60);
    // and a number outside the list is kept as unknown, not misread
    expect(CarServer.VehicleAction.decode(fl(11, new Uint8Array())).vehicleActionMsg).toBeUndefined();
  });

  it('CarServer response with a plain-text reason', () => {
    const resp = CarServer.Response.create({
      actionStatus: {
        result: CarServer.OperationStatus_E.OPERATIONSTATUS_ERROR,
        resultReason: { plainText: 'already_set' },
      },
    });
    roundTrip<CarServer.Response>(CarServer.Response, resp, fl(1, fv(1, 1), fl(2, fl(1, str('already_set')))));
  });

  it('keeps unknown fields on decode and re-emits them', () => {
    // field 99 (varint) is unknown to VehicleAction; field 2000 (bytes) unknown to RoutableMessage
    const va = join(fl(5, fv(1, 50)), fv(99, 7));
    const back = CarServer.VehicleAction.decode(va);
    expect(back.chargingSetLimitAction?.percent).toBe(50);
    expect(hex(CarServer.VehicleAction.encode(back).finish())).toBe(hex(va));
    const rm = join(fl(6, fv(1, 3)), fl(2000, str('x')));
    expect(hex(UniversalMessage.RoutableMessage.encode(UniversalMessage.RoutableMessage.decode(rm)).finish())).toBe(hex(rm));
  });
});
