/**
 * A light, one-shot abort source for the per-request hot path.
 *
 * Why not `AbortController`: in Node 20 every controller builds an EventTarget-backed
 * `AbortSignal`, and listeners go through EventTarget bookkeeping. The proxy made two per
 * signed command (client disconnect on the fast path, deadline/abort in the upstream client)
 * and nearly none of them ever fire; at 128 connections `createAbortSignal` plus the
 * listener add/remove were ~3.5 % of the proxy's CPU profile. An `AbortSource` is a plain
 * object with the same observable surface.
 *
 * undici accepts it as a request `signal`: its `addAbortListener` only needs
 * `addEventListener`/`removeEventListener` and reads `aborted` and `reason`.
 */

/** What the proxy needs of an abort signal. A real `AbortSignal` satisfies it too. */
export interface AbortLike {
  readonly aborted: boolean;
  readonly reason?: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/** Both the controller and its signal: `abort()` once, listeners run once, in order. */
export class AbortSource implements AbortLike {
  aborted = false;
  reason: unknown = undefined;
  private listeners: Array<() => void> | undefined = undefined;

  /** Like EventTarget: a listener added after the abort is not called. */
  addEventListener(_type: 'abort', listener: () => void): void {
    if (this.aborted) return;
    (this.listeners ??= []).push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const l = this.listeners;
    if (!l) return;
    const i = l.indexOf(listener);
    if (i >= 0) l.splice(i, 1);
  }

  abort(reason?: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason ?? new DOMException('This operation was aborted', 'AbortError');
    const l = this.listeners;
    this.listeners = undefined;
    if (!l) return;
    for (const fn of l) {
      // As EventTarget does: one throwing listener neither stops the others nor the caller;
      // the error still surfaces (as an uncaught exception), it is not swallowed.
      try {
        fn();
      } catch (err) {
        queueMicrotask(() => {
          throw err;
        });
      }
    }
  }
}
