import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  commandMetadata,
  MetadataBuilder,
  responseMetadata,
  SlidingWindow,
  StrictCounter,
  Tag,
  toHex,
  uint32be,
  updateSlidingWindow,
  WINDOW_SIZE,
} from '../../../src/crypto/index.js';
import { Signatures, UniversalMessage } from '../../../src/protocol/pb.js';

describe('MetadataBuilder', () => {
  it('throws on out-of-order or repeated tags', () => {
    const b = new MetadataBuilder().add(Tag.DOMAIN, Uint8Array.of(1)).add(Tag.PERSONALIZATION, Uint8Array.of(2));
    expect(() => b.add(Tag.DOMAIN, Uint8Array.of(3))).toThrow(expect.objectContaining({ code: 'internal_error' }));
    expect(() => b.add(Tag.PERSONALIZATION, Uint8Array.of(3))).toThrow(/ascending/);
  });

  it('throws on values longer than 255 bytes and accepts exactly 255', () => {
    expect(() => new MetadataBuilder().add(Tag.PERSONALIZATION, new Uint8Array(256))).toThrow(/255/);
    const m = new MetadataBuilder().add(Tag.PERSONALIZATION, new Uint8Array(255)).finish();
    expect(m.length).toBe(2 + 255 + 1);
    expect(m[1]).toBe(255);
  });

  it('rejects the END tag as an item, non-uint32 integers, reuse after finish', () => {
    expect(() => new MetadataBuilder().add(Tag.END, new Uint8Array())).toThrow();
    expect(() => uint32be(2 ** 32)).toThrow();
    expect(() => uint32be(-1)).toThrow();
    expect(() => uint32be(1.5)).toThrow();
    const b = new MetadataBuilder();
    b.finish();
    expect(() => b.add(0, Uint8Array.of(1))).toThrow();
  });

  it('writes strings, uint32s and bytes exactly as the byte-array items would, across buffer growth', () => {
    const te = new TextEncoder();
    for (const text of ['5YJ3E1EA7KF000001', 'Zürich-ü', '']) {
      expect(toHex(new MetadataBuilder().addString(Tag.PERSONALIZATION, text).finish())).toBe(
        toHex(new MetadataBuilder().add(Tag.PERSONALIZATION, te.encode(text)).finish()),
      );
    }
    expect(() => new MetadataBuilder().addString(Tag.PERSONALIZATION, 'x'.repeat(256))).toThrow(/255/);
    expect(() => new MetadataBuilder().addUint32(Tag.COUNTER, 2 ** 32)).toThrow(/32-bit/);
    // Several long items push the builder past its initial buffer: every byte must survive.
    const parts = [Tag.SIGNATURE_TYPE, Tag.DOMAIN, Tag.PERSONALIZATION, Tag.EPOCH].map((tag, i) => [tag, new Uint8Array(200).fill(i + 1)] as const);
    const grown = new MetadataBuilder();
    for (const [tag, value] of parts) grown.add(tag, value);
    grown.addUint32(Tag.EXPIRES_AT, 0xdeadbeef);
    const expected = [...parts.flatMap(([tag, value]) => [tag, value.length, ...value]), Tag.EXPIRES_AT, 4, 0xde, 0xad, 0xbe, 0xef, Tag.END];
    expect([...grown.finish()]).toEqual(expected);
  });

  it('empty metadata is just the terminator', () => {
    expect(toHex(new MetadataBuilder().finish())).toBe('ff');
  });

  it('command metadata includes flags only when non-zero; response metadata always does', () => {
    const base = { signatureType: 8, domain: 3, vin: 'V', epoch: new Uint8Array(16), expiresAt: 10, counter: 1 };
    const without = toHex(commandMetadata({ ...base, flags: 0 }));
    const withFlags = toHex(commandMetadata({ ...base, flags: 2 }));
    expect(without.endsWith('050400000001ff')).toBe(true);
    expect(withFlags.endsWith('050400000001070400000002ff')).toBe(true);
    const r = toHex(responseMetadata({ domain: 3, vin: 'V', counter: 1, flags: 0, requestHash: Uint8Array.of(5, 1), fault: 0 }));
    expect(r).toBe('000109' + '010103' + '020156' + '050400000001' + '070400000000' + '08020501' + '090400000000' + 'ff');
  });

  it('local constants agree with the generated protobuf enums', () => {
    expect(Tag.SIGNATURE_TYPE).toBe(Signatures.Tag.TAG_SIGNATURE_TYPE);
    expect(Tag.FAULT).toBe(Signatures.Tag.TAG_FAULT);
    expect(Tag.END).toBe(Signatures.Tag.TAG_END);
    expect(Signatures.SignatureType.SIGNATURE_TYPE_HMAC_PERSONALIZED).toBe(8);
    expect(Signatures.SignatureType.SIGNATURE_TYPE_AES_GCM_RESPONSE).toBe(9);
    expect(UniversalMessage.Flags.FLAG_ENCRYPT_RESPONSE).toBe(1);
  });
});

describe('sliding window', () => {
  it('first counter is accepted, then duplicates are rejected', () => {
    const w = new SlidingWindow();
    expect(w.accept(7)).toBe(true);
    expect(w.accept(7)).toBe(false);
    expect(w.accept(8)).toBe(true);
    expect(w.accept(6)).toBe(true); // out of order, within window
    expect(w.accept(6)).toBe(false);
  });

  it('accepts exactly WINDOW_SIZE older counters and nothing older', () => {
    const w = new SlidingWindow();
    w.accept(100);
    expect(w.wouldAccept(100 - WINDOW_SIZE)).toBe(true);
    expect(w.wouldAccept(100 - WINDOW_SIZE - 1)).toBe(false);
  });

  it('a jump of exactly 32 keeps the old highest counter in the window (no JS shift-by-32 wrap)', () => {
    const r1 = updateSlidingWindow({ counter: 10, history: 0xffffffff }, 42);
    expect(r1.ok).toBe(true);
    expect(r1.state.history).toBe(0x80000000); // only counter 10 (age 32) remembered
    expect(updateSlidingWindow(r1.state, 10).ok).toBe(false);
    expect(updateSlidingWindow(r1.state, 11).ok).toBe(true);
  });

  it('property: never accepts a counter twice, and accepts every fresh counter within reach', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 200 }), { maxLength: 300 }), (seq) => {
        const w = new SlidingWindow();
        const seen = new Set<number>();
        let highest = -1;
        for (const c of seq) {
          const ok = w.accept(c);
          if (seen.has(c)) expect(ok).toBe(false);
          else if (highest < 0 || c > highest || highest - c <= WINDOW_SIZE) expect(ok).toBe(true);
          else expect(ok).toBe(false);
          if (ok) {
            seen.add(c);
            highest = Math.max(highest, c);
          }
        }
      }),
      { numRuns: 200 },
    );
  });

  it('strict counter requires strictly increasing values', () => {
    const s = new StrictCounter();
    expect(s.accept(0)).toBe(false);
    expect(s.accept(1)).toBe(true);
    expect(s.accept(3)).toBe(true);
    expect(s.accept(2)).toBe(false);
    expect(s.accept(3)).toBe(false);
    expect(s.accept(2 ** 32)).toBe(false);
  });
});
