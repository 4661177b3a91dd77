import { describe, expect, it } from 'vitest';
import { MemoryVinQueue } from '../../../src/session/queue.js';
import { MemorySessionStore } from '../../../src/session/store.js';
import { VcpError } from '../../../src/protocol/errors.js';

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('MemoryVinQueue', () => {
  it('runs tasks for one VIN in arrival order, one at a time', async () => {
    const q = new MemoryVinQueue();
    const log: string[] = [];
    let running = 0;
    let maxRunning = 0;
    const tasks = Array.from({ length: 50 }, (_, i) =>
      q.run('VIN', async () => {
        running++;
        maxRunning = Math.max(maxRunning, running);
        // Yield a few times so out-of-order or overlapping execution would show.
        for (let k = 0; k < (i % 3) + 1; k++) await Promise.resolve();
        log.push(String(i));
        running--;
        return i;
      }),
    );
    expect(await Promise.all(tasks)).toEqual(Array.from({ length: 50 }, (_, i) => i));
    expect(log).toEqual(Array.from({ length: 50 }, (_, i) => String(i)));
    expect(maxRunning).toBe(1);
    expect(q.depth('VIN')).toBe(0);
  });

  it('runs different VINs in parallel', async () => {
    const q = new MemoryVinQueue();
    const gate = deferred();
    const a = q.run('A', () => gate.promise.then(() => 'a'));
    const b = q.run('B', async () => 'b');
    expect(await b).toBe('b'); // B finished while A is still blocked
    gate.resolve();
    expect(await a).toBe('a');
  });

  it('keeps going after a failing task', async () => {
    const q = new MemoryVinQueue();
    const p1 = q.run('V', async () => {
      throw new Error('boom');
    });
    const p2 = q.run('V', async () => 2);
    await expect(p1).rejects.toThrow('boom');
    expect(await p2).toBe(2);
  });

  it('refuses work beyond the limit with a temporary 503', async () => {
    const q = new MemoryVinQueue(2);
    const gate = deferred();
    const p1 = q.run('V', () => gate.promise);
    const p2 = q.run('V', async () => undefined);
    const err = await q.run('V', async () => undefined).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VcpError);
    expect((err as VcpError).status).toBe(503);
    expect((err as VcpError).temporary).toBe(true);
    gate.resolve();
    await Promise.all([p1, p2]);
  });

  it('skips a queued task whose client went away', async () => {
    const q = new MemoryVinQueue();
    const gate = deferred();
    const p1 = q.run('V', () => gate.promise);
    const ac = new AbortController();
    let ran = false;
    const p2 = q.run(
      'V',
      async () => {
        ran = true;
      },
      ac.signal,
    );
    ac.abort();
    gate.resolve();
    await p1;
    await expect(p2).rejects.toMatchObject({ code: 'client_closed_request' });
    expect(ran).toBe(false);
  });
});

describe('MemorySessionStore', () => {
  it('stores per (VIN, domain) and evicts whole VINs by LRU', () => {
    const s = new MemorySessionStore<string>(2);
    s.set('A', 2, 'a2');
    s.set('A', 3, 'a3');
    s.set('B', 2, 'b2');
    expect(s.get('A', 2)).toBe('a2'); // touch A
    s.set('C', 3, 'c3');
    expect(s.get('B', 2)).toBeUndefined();
    expect(s.get('A', 3)).toBe('a3');
    s.delete('A', 2);
    expect(s.get('A', 2)).toBeUndefined();
    expect(s.get('A', 3)).toBe('a3');
    expect(s.size).toBe(2);
  });
});
