/**
 * Transport: everything about talking HTTP to the upstream service.
 *
 * Owns: the undici connection pools (one per origin), the upstream-status → class table,
 * upstream choice (fixed, token `aud` + allowlist, 421 re-routing) and header hygiene.
 * Must not: know about commands, sessions or protocol messages — it moves bytes and
 * classifies answers; the session layer decides what a class means for a command.
 */
export { UpstreamClient, classifyNetworkError } from './client.js';
export type { Upstream, UpstreamRequest, UpstreamResponse, UpstreamClientOptions } from './client.js';
export { classifyStatus, ambiguousStatus } from './classify.js';
export type { UpstreamClass, Endpoint } from './classify.js';
export { UpstreamRouter, hostAllowed, decodeJwtPayload, bearerToken } from './upstream.js';
export type { Route, RouterOptions } from './upstream.js';
export { stripHopByHop, headersFromFetch, appendForwardedFor } from './headers.js';
export { LruMap, ExpiringSet } from './lru.js';
export { AbortSource } from './abort.js';
export type { AbortLike } from './abort.js';
