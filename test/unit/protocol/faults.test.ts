import { describe, expect, it } from 'vitest';
import { ALL_FAULTS, faultError, faultInfo, faultRemedy } from '../../../src/protocol/faults.js';
import { UniversalMessage } from '../../../src/protocol/pb.js';
import { VcpError } from '../../../src/protocol/errors.js';

const F = UniversalMessage.MessageFault_E;
const enumValues = Object.values(F) as number[];

describe('fault table', () => {
  it('has an entry for every MessageFault_E value of the generated enum', () => {
    expect(enumValues.length).toBe(29); // 0..28 today; a new enum value must get a row
    expect([...ALL_FAULTS]).toEqual([...enumValues].sort((a, b) => a - b));
    for (const v of enumValues) {
      const info = faultInfo(v);
      expect(info.code, `fault ${v}`).not.toBe('unknown_fault');
      expect(info.code).toMatch(/^[a-z][a-z0-9_]*$/);
      expect(info.description.length).toBeGreaterThan(10);
      expect(info.remedy.length).toBeGreaterThan(5);
      expect(info.httpStatus).toBeGreaterThanOrEqual(200);
      expect(info.name).toMatch(/^MESSAGEFAULT_ERROR_/);
    }
  });

  it('codes are unique', () => {
    const codes = enumValues.map((v) => faultInfo(v).code);
    expect(new Set(codes).size).toBe(codes.length);
  });

  it('marks exactly the faults the vehicle answers with fresh session info as resync', () => {
    const resync = enumValues.filter((v) => faultInfo(v).resync).sort((a, b) => a - b);
    expect(resync).toEqual([
      F.MESSAGEFAULT_ERROR_INVALID_SIGNATURE,
      F.MESSAGEFAULT_ERROR_INVALID_TOKEN_OR_COUNTER,
      F.MESSAGEFAULT_ERROR_INCORRECT_EPOCH,
      F.MESSAGEFAULT_ERROR_TIME_EXPIRED,
      F.MESSAGEFAULT_ERROR_TIME_TO_LIVE_TOO_LONG,
    ]);
    expect(faultInfo(F.MESSAGEFAULT_ERROR_BAD_PARAMETER).resync).toBe(false);
    expect(faultInfo(F.MESSAGEFAULT_ERROR_BUSY).resync).toBe(false);
  });

  it('temporary faults match the reference retriable list', () => {
    const temp = enumValues.filter((v) => faultInfo(v).temporary).sort((a, b) => a - b);
    expect(temp).toEqual([1, 2, 5, 6, 11, 15, 17, 20]);
  });

  it('only faults that imply delivery are may-have-succeeded', () => {
    const mhs = enumValues.filter((v) => faultInfo(v).mayHaveSucceeded).sort((a, b) => a - b);
    expect(mhs).toEqual([F.MESSAGEFAULT_ERROR_RESPONSE_MTU_EXCEEDED, F.MESSAGEFAULT_ERROR_REPEATED_COUNTER]);
    // a may-have-succeeded fault is never also a resync (resync means re-sign and resend)
    for (const v of mhs) expect(faultInfo(v).resync).toBe(false);
  });

  it('unknown key points at the pairing link', () => {
    const info = faultInfo(F.MESSAGEFAULT_ERROR_UNKNOWN_KEY_ID);
    expect(info.code).toBe('key_not_paired');
    expect(info.remedy).toContain('{pairing_url}/_ak/{developer_domain}');
    expect(faultRemedy(3, { pairingUrl: 'https://pair.example/', developerDomain: 'app.example.com' })).toContain(
      'https://pair.example/_ak/app.example.com',
    );
  });

  it('unrecognised fault numbers get a conservative entry', () => {
    const info = faultInfo(999);
    expect(info.code).toBe('unknown_fault');
    expect(info.resync).toBe(false);
    expect(info.temporary).toBe(false);
  });

  it('faultError builds a typed VcpError', () => {
    const e = faultError(F.MESSAGEFAULT_ERROR_BUSY);
    expect(e).toBeInstanceOf(VcpError);
    expect(e.code).toBe('vehicle_busy');
    expect(e.status).toBe(503);
    expect(e.temporary).toBe(true);
    expect(e.mayHaveSucceeded).toBe(false);
    const m = faultError(F.MESSAGEFAULT_ERROR_RESPONSE_MTU_EXCEEDED);
    expect(m.mayHaveSucceeded).toBe(true);
    const k = faultError(F.MESSAGEFAULT_ERROR_UNKNOWN_KEY_ID, { pairingUrl: 'https://p.example', developerDomain: 'd.example' });
    expect(k.status).toBe(403);
    expect(k.message).toContain('https://p.example/_ak/d.example');
  });
});
