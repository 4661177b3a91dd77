/**
 * The dispatcher's pooled random source (src/session/dispatcher.ts `pooledRandom`): exact
 * lengths, fresh bytes on every draw (no pool byte handed out twice, across refills), and
 * draws larger than the pool still work. Uniqueness of 16-byte draws is the property the
 * protocol relies on (the handshake uuid is the challenge).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { pooledRandom } from '../../src/session/dispatcher.js';

describe('pooledRandom', () => {
  it('returns exactly n bytes, and 16-byte draws never repeat across many refills', () => {
    const random = pooledRandom(256);
    const seen = new Set<string>();
    for (let i = 0; i < 20_000; i++) {
      const b = random(16);
      expect(b.length).toBe(16);
      const hex = Buffer.from(b).toString('hex');
      expect(seen.has(hex)).toBe(false);
      seen.add(hex);
    }
  });

  it('draws of mixed sizes are independent copies (mutating one never changes another)', () => {
    const random = pooledRandom(64);
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 200 }), { minLength: 1, maxLength: 30 }), (sizes) => {
        const draws = sizes.map((n) => random(n));
        draws.forEach((d, i) => expect(d.length).toBe(sizes[i]));
        const snapshot = draws.map((d) => Buffer.from(d).toString('hex'));
        for (const d of draws) d.fill(0xaa);
        const again = sizes.map((n) => random(n));
        // Fresh draws are not the bytes we just overwrote, nor copies of earlier draws.
        again.forEach((d, i) => {
          if (d.length >= 8) {
            expect(Buffer.from(d).toString('hex')).not.toBe('aa'.repeat(d.length));
            expect(Buffer.from(d).toString('hex')).not.toBe(snapshot[i]);
          }
        });
      }),
      { numRuns: 300 },
    );
  });

  it('is not all zeros or constant (the pool is actually filled)', () => {
    const random = pooledRandom();
    const b = random(64);
    expect(new Set(b).size).toBeGreaterThan(8);
  });
});
