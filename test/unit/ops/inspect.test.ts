import { describe, expect, it } from 'vitest';
import { CarServer, Signatures, UniversalMessage, VCSEC } from '../../../src/protocol/pb.js';
import { VcpError } from '../../../src/protocol/errors.js';
import { decodeAs, decodeRoutable, extractMessageText, parseBytes } from '../../../src/ops/inspect.js';

const enc = {
  routable: (m: UniversalMessage.RoutableMessage.$Properties) => UniversalMessage.RoutableMessage.encode(m).finish(),
};

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    return e instanceof VcpError ? e.code : `not a VcpError: ${String(e)}`;
  }
  return undefined;
}

describe('parseBytes', () => {
  it('reads hex, base64 and URL-safe base64', () => {
    expect([...parseBytes('0aff')]).toEqual([0x0a, 0xff]);
    expect([...parseBytes('+/8=')]).toEqual([0xfb, 0xff]);
    expect([...parseBytes('-_8')]).toEqual([0xfb, 0xff]);
    expect([...parseBytes(' 0a\nff ')]).toEqual([0x0a, 0xff]);
    // "abcd" is valid hex and valid base64: hex by default, base64 when asked.
    expect([...parseBytes('abcd')]).toEqual([0xab, 0xcd]);
    expect([...parseBytes('abcd', 'base64')]).toEqual([0x69, 0xb7, 0x1d]);
  });

  it('rejects garbage with invalid_encoding', () => {
    expect(codeOf(() => parseBytes('not base64!'))).toBe('invalid_encoding');
    expect(codeOf(() => parseBytes(''))).toBe('invalid_encoding');
    expect(codeOf(() => parseBytes('abc', 'hex'))).toBe('invalid_encoding');
    expect(codeOf(() => parseBytes('a'))).toBe('invalid_encoding');
  });
});

describe('extractMessageText', () => {
  it('takes the message out of JSON bodies and answers', () => {
    expect(extractMessageText('{"routable_message":"AAA="}')).toBe('AAA=');
    expect(extractMessageText('{"response":"BBB="}')).toBe('BBB=');
    expect(extractMessageText('  CCC=  ')).toBe('CCC=');
    expect(codeOf(() => extractMessageText('{"response": 1}'))).toBe('invalid_encoding');
    expect(codeOf(() => extractMessageText('{nope'))).toBe('invalid_encoding');
  });
});

describe('decodeRoutable', () => {
  it('decodes a VCSEC command and its UnsignedMessage payload, bytes as hex', () => {
    const payload = VCSEC.UnsignedMessage.encode({ RKEAction: VCSEC.RKEAction_E.RKE_ACTION_LOCK }).finish();
    const bytes = enc.routable({
      toDestination: { domain: UniversalMessage.Domain.DOMAIN_VEHICLE_SECURITY },
      fromDestination: { routingAddress: new Uint8Array(16).fill(0xab) },
      protobufMessageAsBytes: payload,
      uuid: new Uint8Array([1, 2, 3]),
      signatureData: {
        signerIdentity: { publicKey: new Uint8Array([4, 5]) },
        HMAC_PersonalizedData: { epoch: new Uint8Array([9, 9]), counter: 7, expiresAt: 30, tag: new Uint8Array([0xee]) },
      },
    });
    const out = decodeRoutable(bytes);
    expect(out.type).toBe('UniversalMessage.RoutableMessage');
    expect(out.message).toMatchObject({
      toDestination: { domain: 'DOMAIN_VEHICLE_SECURITY' },
      fromDestination: { routingAddress: 'ab'.repeat(16) },
      uuid: '010203',
      signatureData: {
        signerIdentity: { publicKey: '0405' },
        HMAC_PersonalizedData: { epoch: '0909', counter: 7, expiresAt: 30, tag: 'ee' },
      },
    });
    expect(out.payload).toEqual({
      type: 'VCSEC.UnsignedMessage',
      message: { RKEAction: 'RKE_ACTION_LOCK', subMessage: 'RKEAction' },
    });
    expect(out.warnings).toBeUndefined();
  });

  it('decodes an infotainment command as CarServer.Action', () => {
    const payload = CarServer.Action.encode({ vehicleAction: { vehicleControlHonkHornAction: {} } }).finish();
    const out = decodeRoutable(
      enc.routable({ toDestination: { domain: UniversalMessage.Domain.DOMAIN_INFOTAINMENT }, protobufMessageAsBytes: payload }),
    );
    expect(out.payload).toMatchObject({
      type: 'CarServer.Action',
      message: { vehicleAction: { vehicleControlHonkHornAction: {} } },
    });
  });

  it('decodes answers by the domain they come from', () => {
    const vcsec = VCSEC.FromVCSECMessage.encode({ commandStatus: { operationStatus: 0 } }).finish();
    const a = decodeRoutable(
      enc.routable({ fromDestination: { domain: UniversalMessage.Domain.DOMAIN_VEHICLE_SECURITY }, protobufMessageAsBytes: vcsec }),
    );
    expect(a.payload).toMatchObject({ type: 'VCSEC.FromVCSECMessage' });
    const cs = CarServer.Response.encode({ actionStatus: { result: 0 } }).finish();
    const b = decodeRoutable(
      enc.routable({ fromDestination: { domain: UniversalMessage.Domain.DOMAIN_INFOTAINMENT }, protobufMessageAsBytes: cs }),
    );
    expect(b.payload).toMatchObject({ type: 'CarServer.Response', message: { actionStatus: {} } });
  });

  it('reports AES-GCM payloads as encrypted instead of decoding ciphertext', () => {
    const out = decodeRoutable(
      enc.routable({
        toDestination: { domain: UniversalMessage.Domain.DOMAIN_INFOTAINMENT },
        protobufMessageAsBytes: new Uint8Array([0xde, 0xad, 0xbe, 0xef]),
        signatureData: {
          AES_GCM_PersonalizedData: { epoch: new Uint8Array(16), nonce: new Uint8Array(12), counter: 1, expiresAt: 5, tag: new Uint8Array(16) },
        },
      }),
    );
    expect(out.payload).toMatchObject({ encrypted: true });
    expect(out.message).toMatchObject({ protobufMessageAsBytes: 'deadbeef' });
  });

  it('decodes handshake session info', () => {
    const si = Signatures.SessionInfo.encode({ counter: 5, epoch: new Uint8Array([1, 2]), clockTime: 100, publicKey: new Uint8Array([4]) }).finish();
    const out = decodeRoutable(
      enc.routable({ fromDestination: { domain: UniversalMessage.Domain.DOMAIN_VEHICLE_SECURITY }, sessionInfo: si }),
    );
    expect(out.sessionInfo).toEqual({
      type: 'Signatures.SessionInfo',
      message: { counter: 5, epoch: '0102', clockTime: 100, publicKey: '04', status: 'SESSION_INFO_STATUS_OK', handle: 0 },
    });
  });

  it('throws invalid_message on bytes that are not a routable message', () => {
    expect(codeOf(() => decodeRoutable(new Uint8Array([0xde, 0xad, 0xbe, 0xef])))).toBe('invalid_message');
    // Valid protobuf, but only a field number RoutableMessage does not have.
    expect(codeOf(() => decodeRoutable(new Uint8Array([0x08, 0x01])))).toBe('invalid_message');
  });

  it('warns when some fields were not understood', () => {
    const known = enc.routable({ uuid: new Uint8Array([1]) });
    const withUnknown = new Uint8Array([...known, 0xf8, 0x06, 0x01]); // field 111, varint 1
    expect(decodeRoutable(withUnknown).warnings?.[0]).toMatch(/3 byte\(s\) were not understood/);
    expect(decodeRoutable(known).warnings).toBeUndefined();
  });

  it('counts unknown fields inside sub-messages too', () => {
    // signatureData (field 13) holding only an unknown field 100 (varint 5).
    const inner = new Uint8Array([0xa0, 0x06, 0x05]);
    const bytes = new Uint8Array([0x6a, inner.length, ...inner, 0x9a, 0x03, 0x01, 0x07]); // + uuid 07
    const out = decodeRoutable(bytes);
    expect(out.message).toMatchObject({ uuid: '07' });
    expect(out.warnings?.[0]).toMatch(/^3 byte\(s\)/);
  });
});

describe('decodeAs', () => {
  it('decodes a bare payload of the chosen type', () => {
    const bytes = VCSEC.UnsignedMessage.encode({ RKEAction: VCSEC.RKEAction_E.RKE_ACTION_UNLOCK }).finish();
    expect(decodeAs('vcsec-unsigned', bytes).message).toMatchObject({ RKEAction: 'RKE_ACTION_UNLOCK' });
  });
});
