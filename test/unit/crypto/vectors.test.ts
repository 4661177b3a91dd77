/**
 * Every published test vector: protocol.md examples and the hex constants in the
 * reference's internal/authentication tests. Vectors are data (test/vectors/crypto-*.json)
 * with their source recorded; the count assertions make a silently dropped vector fail.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { p256 } from '@noble/curves/nist.js';
import {
  commandMetadata,
  decodeSessionInfo,
  deriveSessionKey,
  ecdhSharedX,
  fromHex,
  gcmDecrypt,
  gcmEncrypt,
  publicKeyFromScalar,
  requestHash,
  serializeMetadata,
  sessionInfoMetadata,
  buildSessionInfoRequest,
  Session,
  SessionKeys,
  sessionKey,
  type CommandKey,
  SignatureType,
  tlv,
  toHex,
  uint32be,
  updateSlidingWindow,
  vinBytes,
} from '../../../src/crypto/index.js';
import { UniversalMessage } from '../../../src/protocol/pb.js';

type V = Record<string, any> & { id: string };
const load = (name: string) =>
  JSON.parse(readFileSync(new URL(`../../vectors/${name}`, import.meta.url), 'utf8')) as { source: string; vectors: V[] };

const pm = load('crypto-protocol-md.json');
const ref = load('crypto-reference-tests.json');
const byId = (set: { vectors: V[] }, id: string): V => {
  const v = set.vectors.find((x) => x.id === id);
  if (!v) throw new Error(`missing vector ${id}`);
  return v;
};
const hex = toHex;
/** A CommandKey over a published test scalar. */
const docKey = (scalarHex: string): CommandKey => ({
  publicKey: publicKeyFromScalar(fromHex(scalarHex)),
  sharedSecretX: (peer) => ecdhSharedX(fromHex(scalarHex), peer),
  signJws: () => {
    throw new Error('unused');
  },
});
/** Random source that returns the given byte strings in order (the documented draws). */
const draws = (seq: string[]) => {
  let i = 0;
  return (n: number) => {
    const b = fromHex(seq[i++] ?? '');
    if (b.length !== n) throw new Error(`draw ${i - 1}: wanted ${n} bytes, vector has ${b.length}`);
    return b;
  };
};
const item = (x: { tag: number; value_ascii?: string; value_uint32?: number }) =>
  [x.tag, x.value_ascii !== undefined ? vinBytes(x.value_ascii) : uint32be(x.value_uint32!)] as const;

describe('protocol.md vectors', () => {
  it('records its source and has every vector', () => {
    expect(pm.source).toMatch(/protocol\.md/);
    expect(pm.vectors.map((v) => v.id)).toEqual([
      'tlv_vin',
      'tlv_counter',
      'tlv_serialize',
      'vehicle_public_key',
      'client_public_key',
      'shared_key_K',
      'session_info_key',
      'session_info_decode',
      'session_info_metadata',
      'session_info_tag',
      'aes_gcm_metadata',
      'aes_gcm_encrypt',
      'routable_message_tx',
      'handshake_example',
      'aes_gcm_routable_message',
    ]);
  });

  it('TLV items and serialization', () => {
    for (const id of ['tlv_vin', 'tlv_counter']) {
      const v = byId(pm, id);
      const [tag, value] = item(v as any);
      expect(hex(tlv(tag, value))).toBe(v.expect);
    }
    const s = byId(pm, 'tlv_serialize');
    expect(hex(serializeMetadata(s.items.map(item)))).toBe(s.expect);
  });

  it('test key public points', () => {
    for (const id of ['vehicle_public_key', 'client_public_key']) {
      const v = byId(pm, id);
      expect(hex(publicKeyFromScalar(fromHex(v.scalar)))).toBe(v.expect);
    }
  });

  it('K from both sides of ECDH', () => {
    const v = byId(pm, 'shared_key_K');
    const C = publicKeyFromScalar(fromHex(v.client_scalar));
    const Vp = publicKeyFromScalar(fromHex(v.vehicle_scalar));
    expect(hex(deriveSessionKey(fromHex(v.client_scalar), Vp))).toBe(v.expect);
    expect(hex(deriveSessionKey(fromHex(v.vehicle_scalar), C))).toBe(v.expect);
  });

  it('SESSION_INFO_KEY', () => {
    const v = byId(pm, 'session_info_key');
    expect(v.label).toBe('session info');
    expect(hex(SessionKeys.fromSharedKey(fromHex(v.K)).sessionInfoKey)).toBe(v.expect);
  });

  it('session info decodes to the documented fields', () => {
    const v = byId(pm, 'session_info_decode');
    const info = decodeSessionInfo(fromHex(v.session_info));
    expect({ counter: info.counter, publicKey: hex(info.publicKey), epoch: hex(info.epoch), clockTime: info.clockTime }).toEqual(
      v.expect,
    );
  });

  it('session info metadata and tag', () => {
    const m = byId(pm, 'session_info_metadata');
    expect(hex(sessionInfoMetadata(m.vin, fromHex(m.challenge)))).toBe(m.expect);
    const t = byId(pm, 'session_info_tag');
    const keys = SessionKeys.fromSharedKey(fromHex(t.K));
    const tag = keys.sessionInfoTag(t.vin, fromHex(t.challenge), fromHex(t.session_info));
    expect(hex(tag)).toBe(t.expect);
    expect(keys.verifySessionInfoTag(t.vin, fromHex(t.challenge), fromHex(t.session_info), fromHex(t.expect))).toBe(true);
  });

  it('AES-GCM metadata', () => {
    const v = byId(pm, 'aes_gcm_metadata');
    const m = commandMetadata({
      signatureType: v.signature_type,
      domain: v.domain,
      vin: v.vin,
      epoch: fromHex(v.epoch),
      expiresAt: v.expires_at,
      counter: v.counter,
      flags: v.flags,
    });
    expect(v.signature_type).toBe(SignatureType.AES_GCM_PERSONALIZED);
    expect(hex(m)).toBe(v.expect);
  });

  it('AES-GCM with the documented nonce reproduces the documented ciphertext and tag', () => {
    const v = byId(pm, 'aes_gcm_encrypt');
    const sealed = gcmEncrypt(fromHex(v.K), fromHex(v.nonce), fromHex(v.plaintext), fromHex(v.metadata));
    expect(hex(sealed.ciphertext)).toBe(v.expect.ciphertext);
    expect(hex(sealed.tag)).toBe(v.expect.tag);
    const back = gcmDecrypt(fromHex(v.K), fromHex(v.nonce), sealed.ciphertext, sealed.tag, fromHex(v.metadata));
    expect(back && hex(back)).toBe(v.plaintext);
    // The AAD is SHA256(metadata): a one-bit metadata change must fail authentication.
    const md = fromHex(v.metadata);
    md[5] = md[5]! ^ 1;
    expect(gcmDecrypt(fromHex(v.K), fromHex(v.nonce), sealed.ciphertext, sealed.tag, md)).toBeNull();
  });

  it('the TX example decodes and re-encodes byte for byte', () => {
    const v = byId(pm, 'routable_message_tx');
    const m = UniversalMessage.RoutableMessage.decode(fromHex(v.message));
    expect(m.toDestination?.domain).toBe(v.expect.to_domain);
    expect(hex(m.fromDestination!.routingAddress!)).toBe(v.expect.routing_address);
    expect(hex(m.protobufMessageAsBytes!)).toBe(v.expect.payload);
    expect(hex(m.uuid)).toBe(v.expect.uuid);
    expect(hex(UniversalMessage.RoutableMessage.encode(m).finish())).toBe(v.message);
  });

  it('handshake example end to end: request fields, then the documented answer authenticates', () => {
    const v = byId(pm, 'handshake_example');
    const key = docKey(v.client_scalar);
    const req = buildSessionInfoRequest({ domain: v.domain, publicKey: key.publicKey, random: draws([v.routing_address, v.uuid]) });
    const m = UniversalMessage.RoutableMessage.decode(req.bytes);
    expect(m.toDestination?.domain).toBe(v.domain);
    expect(hex(m.fromDestination!.routingAddress!)).toBe(v.routing_address);
    expect(hex(m.sessionInfoRequest!.publicKey!)).toBe(v.expect.request_public_key);
    expect(hex(m.uuid)).toBe(v.uuid);
    const s = Session.fromHandshake({
      key,
      vin: v.vin,
      domain: v.domain,
      challenge: req.uuid,
      sessionInfoBytes: fromHex(v.session_info),
      tag: fromHex(v.session_info_tag),
      now: 1_000_000,
    });
    expect({ counter: s.counter, epoch: hex(s.epoch), clock: s.vehicleTime(1_000_000) }).toEqual({
      counter: v.expect.counter,
      epoch: v.expect.epoch,
      clock: v.expect.clock_time,
    });
  });

  it('AES-GCM example RoutableMessage reproduced field for field by Session.signCommand', () => {
    const v = byId(pm, 'aes_gcm_routable_message');
    const key = docKey(v.client_scalar);
    const now = 5_000_000;
    const s = Session.fromJSON(
      {
        v: 1,
        vin: v.vin,
        domain: v.domain,
        clientPublicKey: hex(key.publicKey),
        vehiclePublicKey: v.vehicle_public_key,
        epoch: v.epoch,
        counter: v.counter_before,
        setTime: v.clock_time,
        clockOffsetMs: v.clock_time * 1000 - now,
      },
      key,
    );
    const signed = s.signCommand(fromHex(v.plaintext), {
      expiresInSec: v.expires_in_sec,
      now,
      random: draws(v.random_draws),
      method: 'aes-gcm',
      flags: 0,
    });
    const m = UniversalMessage.RoutableMessage.decode(signed.bytes);
    const g = m.signatureData!.AES_GCM_PersonalizedData!;
    expect({
      to_domain: m.toDestination?.domain,
      routing_address: hex(m.fromDestination!.routingAddress!),
      payload: hex(m.protobufMessageAsBytes!),
      signer_public_key: hex(m.signatureData!.signerIdentity!.publicKey!),
      epoch: hex(g.epoch!),
      nonce: hex(g.nonce!),
      counter: g.counter,
      expires_at: g.expiresAt,
      tag: hex(g.tag!),
      uuid: hex(m.uuid),
    }).toEqual(v.expect);
    expect(m.flags).toBe(0);
  });
});

describe('reference test vectors (internal/authentication)', () => {
  it('records its source and has every vector', () => {
    expect(ref.source).toMatch(/internal\/authentication/);
    expect(ref.vectors.length).toBe(8);
    expect(byId(ref, 'sliding_window').cases.length).toBe(7);
  });

  it('metadata checksum (SHA-256 and SHA-512 of the serialized metadata)', () => {
    for (const [id, alg] of [
      ['metadata_checksum_sha256', 'sha256'],
      ['metadata_checksum_sha512', 'sha512'],
    ] as const) {
      const v = byId(ref, id);
      const m = serializeMetadata((v.items as [number, string][]).map(([t, h]) => [t, fromHex(h)] as const));
      expect(createHash(alg).update(m).digest('hex')).toBe(v.expect);
    }
  });

  it('ECDH Sx keeps its leading zero byte; K = SHA1(Sx)[:16]', () => {
    const v = byId(ref, 'ecdh_shared_x_leading_zero');
    const sx = ecdhSharedX(fromHex(v.scalar), fromHex(v.peer));
    expect(hex(sx)).toBe(v.expect);
    expect(sx.length).toBe(32);
    expect(hex(sessionKey(sx))).toBe(createHash('sha1').update(fromHex(v.expect)).digest('hex').slice(0, 32));
  });

  it('ECDH rejects an off-curve point, the point at infinity and a zero scalar', () => {
    const v = byId(ref, 'ecdh_shared_x_leading_zero');
    const flipped = fromHex(v.peer);
    flipped[1] = flipped[1]! ^ 1;
    expect(() => ecdhSharedX(fromHex(v.scalar), flipped)).toThrow(expect.objectContaining({ code: 'invalid_public_key' }));
    const zero = new Uint8Array(65);
    zero[0] = 4;
    expect(() => ecdhSharedX(fromHex(v.scalar), zero)).toThrow(expect.objectContaining({ code: 'invalid_public_key' }));
    expect(() => ecdhSharedX(new Uint8Array(32), fromHex(v.peer))).toThrow(expect.objectContaining({ code: 'invalid_private_key' }));
  });

  it('public key from scalar, and padding with a small scalar (cross-checked against @noble)', () => {
    const v = byId(ref, 'public_key_from_scalar');
    expect(hex(publicKeyFromScalar(fromHex(v.scalar)))).toBe(v.expect);
    // native_test.go TestSharedSecretPadding: scalar 0x013f against that point yields an
    // X coordinate shorter than 32 bytes; Sx must be left-padded.
    const small = new Uint8Array(32);
    small[30] = 0x01;
    small[31] = 0x3f;
    const sx = ecdhSharedX(small, fromHex(v.expect));
    const noblePoint = p256.getSharedSecret(small, fromHex(v.expect), false); // 0x04 ‖ X ‖ Y
    expect(hex(sx)).toBe(hex(noblePoint.subarray(1, 33)));
    expect(sx[0]).toBe(0);
  });

  it('known AES-GCM-personalized command decrypts', () => {
    const v = byId(ref, 'gcm_known_command');
    const m = UniversalMessage.RoutableMessage.decode(fromHex(v.message));
    const g = m.signatureData!.AES_GCM_PersonalizedData!;
    expect(m.toDestination?.domain).toBe(v.domain);
    const K = deriveSessionKey(fromHex(v.verifier_scalar), fromHex(v.signer_public_key));
    const md = commandMetadata({
      signatureType: SignatureType.AES_GCM_PERSONALIZED,
      domain: v.domain,
      vin: v.vin,
      epoch: fromHex(v.epoch),
      expiresAt: g.expiresAt!,
      counter: g.counter!,
      flags: m.flags,
    });
    expect(g.counter).toBe(0xffffffff);
    const pt = gcmDecrypt(K, g.nonce!, m.protobufMessageAsBytes!, g.tag!, md);
    expect(pt && hex(pt)).toBe(v.expect);
  });

  it('request id: VCSEC truncates HMAC tags to 17 bytes, infotainment does not', () => {
    const v = byId(ref, 'request_id');
    expect(hex(requestHash(SignatureType.HMAC_PERSONALIZED, fromHex(v.tag), 2))).toBe(v.expect.vcsec);
    expect(hex(requestHash(SignatureType.HMAC_PERSONALIZED, fromHex(v.tag), 3))).toBe(v.expect.infotainment);
  });

  it('sliding window cases', () => {
    for (const c of byId(ref, 'sliding_window').cases) {
      const r = updateSlidingWindow({ counter: c.counter, history: c.window }, c.next);
      expect({ ok: r.ok, counter: r.state.counter, window: r.state.history }).toEqual({
        ok: c.ok,
        counter: c.expectCounter,
        window: c.expectWindow,
      });
    }
  });
});
