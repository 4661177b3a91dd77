/**
 * Per-VIN ordering: commands to one vehicle run one at a time in arrival order (the
 * vehicle's anti-replay counter and VCSEC both expect that, and it is what makes "a counter
 * is never used twice" easy to guarantee); different VINs run in parallel.
 *
 * Behind an interface because a later issue runs several replicas that must share the
 * ordering (e.g. a Redis lock); the in-memory version keeps one promise chain per busy VIN
 * and forgets the VIN when its queue drains, so memory is bounded by work in flight.
 */
import { VcpError } from '../protocol/errors.js';
import type { AbortLike } from '../transport/abort.js';

export interface VinQueue {
  /**
   * Runs `task` after every earlier task for `vin` has settled. Rejects without running
   * it when the queue is full or `signal` aborts while waiting.
   */
  run<T>(vin: string, task: () => Promise<T>, signal?: AbortLike): Promise<T>;
  /** Tasks queued or running for `vin` (for tests and metrics). */
  depth(vin: string): number;
}

interface Lane {
  tail: Promise<void>;
  depth: number;
}

export class MemoryVinQueue implements VinQueue {
  private readonly lanes = new Map<string, Lane>();
  constructor(private readonly limit = 1000) {}

  depth(vin: string): number {
    return this.lanes.get(vin)?.depth ?? 0;
  }

  run<T>(vin: string, task: () => Promise<T>, signal?: AbortLike): Promise<T> {
    let lane = this.lanes.get(vin);
    if (lane && lane.depth >= this.limit) {
      return Promise.reject(
        new VcpError('vehicle_busy', `Too many commands are waiting for this vehicle (limit ${this.limit}); nothing was sent. Retry in a moment.`, {
          status: 503,
          temporary: true,
          headers: { 'retry-after': '1' },
        }),
      );
    }
    if (!lane) {
      lane = { tail: Promise.resolve(), depth: 0 };
      this.lanes.set(vin, lane);
    }
    const l = lane;
    l.depth++;
    const result = l.tail.then(() => {
      if (signal?.aborted) {
        throw new VcpError('client_closed_request', 'The client closed the request before the command was sent.', { status: 499 });
      }
      return task();
    });
    const done = (): void => {
      l.depth--;
      if (l.depth === 0 && this.lanes.get(vin) === l) this.lanes.delete(vin);
    };
    // The next task waits for this one to settle either way; errors stay with its caller.
    l.tail = result.then(done, done);
    return result;
  }
}
