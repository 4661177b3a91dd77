import { describe, expect, it } from 'vitest';
import { logTextWithoutNoise, withoutNoise } from '../support/log-noise.js';

describe('test support: log noise removal', () => {
  it('drops random and running fields but keeps a secret leaked anywhere else', () => {
    const line = JSON.stringify({ time: 1763771111000, reqId: 'a1111b2c-0000-4000-8000-000000002222', epoch: 'b7d222274a', msg: 'request', body: { pin: '1111' } });
    const text = logTextWithoutNoise(`${line}\nplain 2222 line`);
    expect(text).toContain('"pin":"1111"');
    expect(text).toContain('plain 2222 line');
    expect(text).not.toContain('1763771111000');
    expect(text).not.toContain('b7d222274a');
    expect(withoutNoise({ note: 'a1111b2c-0000-4000-8000-000000002222', reason: 'pin 2222 wrong' })).toBe('{"reason":"pin 2222 wrong"}');
  });
});
