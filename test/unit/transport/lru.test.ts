import { describe, expect, it } from 'vitest';
import { ExpiringSet, LruMap } from '../../../src/transport/lru.js';

describe('LruMap', () => {
  it('evicts the least recently used entry', () => {
    const m = new LruMap<string, number>(2);
    m.set('a', 1);
    m.set('b', 2);
    expect(m.get('a')).toBe(1); // a is now most recent
    m.set('c', 3);
    expect(m.get('b')).toBeUndefined();
    expect(m.get('a')).toBe(1);
    expect(m.get('c')).toBe(3);
    expect(m.size).toBe(2);
  });
  it('updates in place without evicting', () => {
    const m = new LruMap<string, number>(2);
    m.set('a', 1);
    m.set('b', 2);
    m.set('a', 3);
    expect(m.size).toBe(2);
    expect(m.get('b')).toBe(2);
    expect(m.get('a')).toBe(3);
  });
});

describe('ExpiringSet', () => {
  it('forgets entries after the TTL and beyond the bound', () => {
    let now = 0;
    const s = new ExpiringSet<string>(2, 100, () => now);
    s.add('x');
    expect(s.has('x')).toBe(true);
    now = 100;
    expect(s.has('x')).toBe(false);
    s.add('a');
    s.add('b');
    s.add('c');
    expect(s.has('a')).toBe(false);
    expect(s.has('c')).toBe(true);
  });
});
