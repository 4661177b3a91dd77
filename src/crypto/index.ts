/**
 * src/crypto — the protocol's cryptography, pure and deterministic under test.
 *
 * Owns: TLV metadata (tlv.ts), ECDH → K (ecdh.ts), key derivation / HMAC tags / AES-GCM /
 * request hash (hmac.ts), anti-replay windows (window.ts), the client session state and
 * handshake helpers (session.ts), vehicle-side verification primitives for the simulator
 * (verifier.ts), and Schnorr/JWS math (schnorr.ts, jws*.ts — separate owner).
 *
 * Must not: read files, environment, clocks or randomness directly (time and random bytes
 * are injected as `Clock` / `Random`); log; hold or return private keys (the client side
 * only ever sees a `CommandKey`). Only this folder imports `@noble/*`; ECDH, HMAC, SHA and
 * AES-GCM use node:crypto for speed.
 */
export * from './types.js';
export * from './bytes.js';
export * from './tlv.js';
export * from './ecdh.js';
export * from './hmac.js';
export * from './window.js';
export * from './session.js';
export * from './verifier.js';
