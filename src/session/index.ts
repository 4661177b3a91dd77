/**
 * Session layer: per-(VIN, domain) sessions, the handshake, resync, per-VIN ordering and
 * the signed-command dispatcher.
 *
 * Owns: protocol state (session cache/stores, counters, clock offsets) and the rules for
 * what may be resent. Must not: speak HTTP to clients (src/http shapes answers) or open
 * sockets itself (it goes through src/transport's `Upstream`).
 */
export { SessionDispatcher, mayHaveExecuted } from './dispatcher.js';
export type { DispatcherOptions } from './dispatcher.js';
export { MemorySessionStore } from './store.js';
export type { SessionStore } from './store.js';
export { MemoryVinQueue } from './queue.js';
export type { VinQueue } from './queue.js';
export type { CommandDispatcher, DispatchOutcome, SignedCommandRequest } from './types.js';
