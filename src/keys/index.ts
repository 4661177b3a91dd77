/**
 * src/keys — the partner's command key.
 *
 * Owns: loading the private key from PEM (SEC1 / unencrypted PKCS#8, P-256 only) with a
 * file-permission check, the `LocalKey` implementation of `CommandKey`, key generation,
 * public-key parsing/PEM export, and the Tesla.SS256 JWS used for telemetry configs.
 *
 * Must not: log, return or put in errors any private material (scalar, PEM, DER). The
 * private scalar stays inside `LocalKey`'s private fields; everything else in the program
 * sees only the small `CommandKey` interface, so an HSM/cloud key store can replace
 * `LocalKey` without touching the session or HTTP layers.
 */
export { KeyErrorCode, type KeyErrorCodeValue } from './errors.js';
export { LocalKey, fingerprint, publicKeyToPem } from './local-key.js';
export { loadKeyFile, loadKeyFromPem, parsePublicKey, type LoadKeyOptions } from './keystore.js';
export { generateKeyPair, type GeneratedKeyPair, type PrivateKeyFormat } from './generate.js';
export {
  JWS_ALG,
  TELEMETRY_APP,
  TELEMETRY_AUDIENCE,
  fleetAudience,
  vehicleAudience,
  signJwsClaims,
  signTelemetryConfig,
  verifyJws,
  verifyTelemetryJws,
  type VerifiedJws,
  type VerifyJwsOptions,
} from './jws.js';
