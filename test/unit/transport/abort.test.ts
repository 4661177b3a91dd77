import { describe, expect, it, vi } from 'vitest';
import { AbortSource } from '../../../src/transport/abort.js';

describe('AbortSource', () => {
  it('calls each listener once, in order, and reports aborted with an AbortError reason', () => {
    const s = new AbortSource();
    const calls: string[] = [];
    s.addEventListener('abort', () => calls.push('a'));
    s.addEventListener('abort', () => calls.push('b'));
    expect(s.aborted).toBe(false);
    s.abort();
    s.abort();
    expect(calls).toEqual(['a', 'b']);
    expect(s.aborted).toBe(true);
    expect((s.reason as DOMException).name).toBe('AbortError');
  });

  it('keeps a given reason, drops removed listeners and ignores listeners added after the abort', () => {
    const s = new AbortSource();
    const removed = vi.fn();
    const late = vi.fn();
    s.addEventListener('abort', removed);
    s.removeEventListener('abort', removed);
    s.removeEventListener('abort', () => undefined); // unknown listener: no effect
    const why = new Error('deadline');
    s.abort(why);
    s.addEventListener('abort', late);
    expect(s.reason).toBe(why);
    expect(removed).not.toHaveBeenCalled();
    expect(late).not.toHaveBeenCalled();
  });

  it('runs the other listeners when one throws, and the error still surfaces (rethrown in a microtask)', () => {
    const s = new AbortSource();
    const after = vi.fn();
    const deferred: Array<() => void> = [];
    const spy = vi.spyOn(globalThis, 'queueMicrotask').mockImplementation((fn) => void deferred.push(fn));
    try {
      const boom = new Error('listener failed');
      s.addEventListener('abort', () => {
        throw boom;
      });
      s.addEventListener('abort', after);
      expect(() => s.abort()).not.toThrow();
      expect(after).toHaveBeenCalledTimes(1);
      expect(deferred).toHaveLength(1);
      expect(() => deferred[0]!()).toThrow(boom);
    } finally {
      spy.mockRestore();
    }
  });
});
