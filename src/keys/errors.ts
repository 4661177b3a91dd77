import { VcpError } from '../protocol/errors.js';

/**
 * Stable error codes of the keystore. Callers (CLI, tests) branch on these; the messages are
 * for humans and always say how to fix the problem. No message ever includes key material:
 * they are built from fixed text and the file *name* only, and no OpenSSL error is attached
 * as `cause` (its text is harmless today, but we do not want to depend on that).
 */
export const KeyErrorCode = {
  /** File is empty or whitespace only. */
  EMPTY: 'key_empty',
  /** No PEM block at all (binary DER, JSON, random text). */
  NOT_PEM: 'key_not_pem',
  /** PEM armour present but its base64 or DER content cannot be parsed. */
  CORRUPT: 'key_corrupt',
  /** Password-protected key (encrypted PKCS#8 or legacy encrypted SEC1). */
  ENCRYPTED: 'key_encrypted',
  /** A public key or certificate was given where the private key is needed. */
  PUBLIC_ONLY: 'key_public_only',
  /** An EC key on a curve other than P-256. */
  WRONG_CURVE: 'key_wrong_curve',
  /** Not an EC key at all (RSA, Ed25519, DSA…). */
  WRONG_TYPE: 'key_wrong_type',
  /** Several private keys in one file: we refuse to guess which one is meant. */
  AMBIGUOUS: 'key_ambiguous',
  /** The file is readable by group or others. */
  INSECURE_PERMISSIONS: 'key_insecure_permissions',
  /** The file cannot be opened or read (missing, no permission, a directory). */
  UNREADABLE: 'key_unreadable',
} as const;
export type KeyErrorCodeValue = (typeof KeyErrorCode)[keyof typeof KeyErrorCode];

export const KEYGEN_HINT = 'Create a new key with `npx vcproxy keygen --out ./keys`';

export function keyError(code: KeyErrorCodeValue, message: string): VcpError {
  // status 500: a bad key is an operator configuration problem, not the client's fault.
  return new VcpError(code, message, { status: 500, temporary: false });
}
