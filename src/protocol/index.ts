/**
 * src/protocol — the protocol's facts as code: generated protobuf classes (gen/, via pb.ts),
 * domains, the MessageFault table, application-answer interpretation, RoutableMessage
 * encode/decode, and the VcpError type every layer throws.
 *
 * Must not: do crypto, I/O, read clocks or randomness. Pure functions over bytes/objects.
 * Regenerate gen/ with `npm run gen` after editing proto/*.proto (a drift test enforces it).
 */
export * from './errors.js';
export * from './pb.js';
export * from './domains.js';
export * from './faults.js';
export * from './response.js';
export * from './routable.js';
