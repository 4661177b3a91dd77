import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decodeRoutable,
  decodeRoutableBase64,
  encodeRoutable,
  encodeRoutableBase64,
  fromBase64,
  MAX_ROUTABLE_BYTES,
  toBase64,
} from '../../../src/protocol/routable.js';
import { VcpError } from '../../../src/protocol/errors.js';
import { Domain, domainName, isDomainId } from '../../../src/protocol/domains.js';
import { hex, unhex } from './helpers.js';

const TX = '320208023a1212100a7962c10d38b61dd2a7722780a4f0969a031005514f57616bcc81a8ce0f9d7b48322952040a020805';

describe('routable helpers', () => {
  it('decodes and re-encodes the published TX message', () => {
    const m = decodeRoutable(unhex(TX));
    expect(m.toDestination?.domain).toBe(Domain.VEHICLE_SECURITY);
    expect(hex(encodeRoutable(m))).toBe(TX);
  });

  it('base64 is standard and padded, both ways', () => {
    expect(toBase64(unhex('fbff'))).toBe('+/8=');
    expect(hex(fromBase64('+/8='))).toBe('fbff');
    const b64 = encodeRoutableBase64(decodeRoutable(unhex(TX)));
    expect(b64).toBe(Buffer.from(TX, 'hex').toString('base64'));
    expect(hex(encodeRoutable(decodeRoutableBase64(b64)))).toBe(TX);
  });

  it.each(['-_8', '+/8', 'ab$=', 'a===', ' QQ==', 'QQ==\n'])('rejects non-standard base64 %j', (s) => {
    expect(() => fromBase64(s)).toThrow(VcpError);
  });

  it('garbage → malformed_message, with the caller-chosen status', () => {
    const bad = [unhex('0a'), unhex('32ff'), unhex('ffffffffffffffffffff01'), unhex('0f')];
    for (const b of bad) {
      try {
        decodeRoutable(b, { status: 400 });
        expect.fail(`decoded ${hex(b)}`);
      } catch (e) {
        expect(e).toBeInstanceOf(VcpError);
        expect((e as VcpError).code).toBe('malformed_message');
        expect((e as VcpError).status).toBe(400);
      }
    }
    expect(() => decodeRoutable(new Uint8Array(MAX_ROUTABLE_BYTES + 1))).toThrow(/limit/);
  });

  it('never throws anything but VcpError on arbitrary bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (b) => {
        try {
          decodeRoutable(b);
        } catch (e) {
          expect(e).toBeInstanceOf(VcpError);
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('domains', () => {
  it('has the protocol numbers and names', () => {
    expect(Domain).toEqual({ BROADCAST: 0, VEHICLE_SECURITY: 2, INFOTAINMENT: 3 });
    expect(domainName(2)).toBe('vehicle_security');
    expect(domainName(3)).toBe('infotainment');
    expect(domainName(9)).toBe('domain_9');
    expect(isDomainId(3)).toBe(true);
    expect(isDomainId(1)).toBe(false);
  });
});
