/**
 * Published protocol.md vectors (test/vectors/protocol-md.json): every vector decodes to the
 * stated fields, encodes from those fields to the exact bytes, and re-encodes byte-identical.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as pb from '../../../src/protocol/pb.js';
import { bytesToHex, hex, hexToBase64, unhex } from './helpers.js';

interface Vector {
  name: string;
  type: string;
  bytes_origin: 'published' | 'hand-derived';
  hex: string;
  fields: Record<string, unknown>;
}
interface MessageClass {
  decode(b: Uint8Array): object;
  encode(m: object): { finish(): Uint8Array };
  fromObject(o: Record<string, unknown>): object;
  toObject(m: object, o: object): Record<string, unknown>;
}

const file = JSON.parse(
  readFileSync(new URL('../../vectors/protocol-md.json', import.meta.url), 'utf8'),
) as { source: { path: string; commit: string }; vectors: Vector[] };

function typeOf(name: string): MessageClass {
  const [ns, msg] = name.split('.');
  const t = (pb as unknown as Record<string, Record<string, MessageClass>>)[ns ?? '']?.[msg ?? ''];
  if (!t) throw new Error(`unknown type ${name}`);
  return t;
}

describe('protocol.md vectors', () => {
  it('records its source and keeps every vector', () => {
    expect(file.source.path).toBe('pkg/protocol/protocol.md');
    expect(file.vectors.map((v) => v.name)).toEqual([
      'tx_vcsec_information_request',
      'vcsec_unsigned_information_request',
      'carserver_action_hvac_on',
      'session_info',
      'handshake_request',
      'handshake_response',
      'aes_gcm_command_hvac_on',
    ]);
    expect(file.vectors.filter((v) => v.bytes_origin === 'published')).toHaveLength(4);
  });

  for (const v of file.vectors) {
    describe(v.name, () => {
      const T = typeOf(v.type);
      it('decodes to the stated fields', () => {
        const m = T.decode(unhex(v.hex));
        expect(bytesToHex(T.toObject(m, { enums: String, longs: Number }))).toEqual(v.fields);
      });
      it('encodes the stated fields to the exact bytes', () => {
        const m = T.fromObject(hexToBase64(v.fields) as Record<string, unknown>);
        expect(hex(T.encode(m).finish())).toBe(v.hex);
      });
      it('re-encodes decoded bytes byte-identical', () => {
        expect(hex(T.encode(T.decode(unhex(v.hex))).finish())).toBe(v.hex);
      });
    });
  }

  it('the TX payload is the VCSEC InformationRequest vector', () => {
    const tx = pb.UniversalMessage.RoutableMessage.decode(unhex(file.vectors[0]!.hex));
    const inner = pb.VCSEC.UnsignedMessage.decode(tx.protobufMessageAsBytes!);
    expect(inner.subMessage).toBe('InformationRequest');
    expect(inner.InformationRequest?.informationRequestType).toBe(
      pb.VCSEC.InformationRequestType.INFORMATION_REQUEST_TYPE_GET_WHITELIST_INFO,
    );
  });

  it('the handshake response carries the session info vector', () => {
    const resp = file.vectors.find((v) => v.name === 'handshake_response')!;
    const si = file.vectors.find((v) => v.name === 'session_info')!;
    const m = pb.UniversalMessage.RoutableMessage.decode(unhex(resp.hex));
    expect(m.payload).toBe('sessionInfo');
    expect(hex(m.sessionInfo!)).toBe(si.hex);
    const info = pb.Signatures.SessionInfo.decode(m.sessionInfo!);
    expect(info.counter).toBe(6);
    expect(info.clockTime).toBe(2650);
    expect(info.status).toBe(pb.Signatures.Session_Info_Status.SESSION_INFO_STATUS_OK);
  });
});
