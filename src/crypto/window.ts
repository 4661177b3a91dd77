/**
 * Anti-replay counters.
 *
 * Sliding window (same semantics as the reference's window.go): the state is the highest
 * counter accepted so far plus a 32-bit history where bit i (0-based) records whether
 * counter `highest - (i + 1)` has been seen. A new counter is accepted when it is higher
 * than every previous one, or when it is at most 32 below the highest and its bit is
 * clear. Equal-to-highest, already-seen and too-old counters are rejected and leave the
 * state untouched.
 *
 * Used by:
 *  - the client, per pending request, for response counters (responses may arrive out of
 *    order; a repeated counter is a replay);
 *  - the vehicle-side infotainment verifier, per signer key, for command counters (the
 *    vehicle starts with highest = 0 and treats counter 0 as "no counter"; see verifier.ts).
 * VCSEC does not use a window: it requires strictly increasing counters (`StrictCounter`).
 *
 * JS gotcha: bitwise shifts are taken mod 32, so `x << 32 === x`. Shifts ≥ 32 are special-
 * cased to clear the history instead of silently keeping it.
 */
import { UINT32_MAX } from './types.js';

export const WINDOW_SIZE = 32;

export interface WindowState {
  /** Highest counter accepted so far. */
  counter: number;
  /** Bit i set ⇔ counter `counter - (i + 1)` was accepted. Unsigned 32-bit. */
  history: number;
}

/**
 * Pure update: returns the new state and whether `next` is fresh. On rejection the
 * returned state equals the input state.
 */
export function updateSlidingWindow(state: WindowState, next: number): { ok: boolean; state: WindowState } {
  const { counter, history } = state;
  if (!Number.isInteger(next) || next < 0 || next > UINT32_MAX) return { ok: false, state };
  if (next === counter) return { ok: false, state };
  if (next < counter) {
    const age = counter - next;
    if (age > WINDOW_SIZE) return { ok: false, state };
    const bit = (1 << (age - 1)) >>> 0;
    if ((history & bit) !== 0) return { ok: false, state };
    return { ok: true, state: { counter, history: (history | bit) >>> 0 } };
  }
  const shift = next - counter;
  let h = shift >= WINDOW_SIZE ? 0 : (history << shift) >>> 0;
  if (shift <= WINDOW_SIZE) h = (h | (1 << (shift - 1))) >>> 0;
  return { ok: true, state: { counter: next, history: h } };
}

/** Mutable sliding window. The first counter seen is accepted unconditionally. */
export class SlidingWindow {
  counter = 0;
  history = 0;
  used = false;

  /** Returns true (and records `next`) when `next` has not been seen before. */
  accept(next: number): boolean {
    if (!this.used) {
      if (!Number.isInteger(next) || next < 0 || next > UINT32_MAX) return false;
      this.used = true;
      this.counter = next;
      this.history = 0;
      return true;
    }
    const r = updateSlidingWindow(this, next);
    if (r.ok) {
      this.counter = r.state.counter;
      this.history = r.state.history;
    }
    return r.ok;
  }

  /** Would `next` be accepted? Does not record it. */
  wouldAccept(next: number): boolean {
    if (!this.used) return Number.isInteger(next) && next >= 0 && next <= UINT32_MAX;
    return updateSlidingWindow(this, next).ok;
  }
}

/** VCSEC-style counter: each accepted counter must be strictly greater than the last. */
export class StrictCounter {
  counter = 0;

  accept(next: number): boolean {
    if (!Number.isInteger(next) || next <= this.counter || next > UINT32_MAX) return false;
    this.counter = next;
    return true;
  }
}
