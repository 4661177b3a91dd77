/**
 * Fresh P-256 command keys. Randomness comes from node:crypto (OpenSSL's CSPRNG); this is the
 * one place in the keys layer that needs it, and only for new keys — loading and signing are
 * deterministic.
 */
import { generateKeyPairSync } from 'node:crypto';

export type PrivateKeyFormat = 'sec1' | 'pkcs8';

export interface GeneratedKeyPair {
  /** `EC PRIVATE KEY` (sec1, default — what `openssl ecparam -genkey -noout` writes) or `PRIVATE KEY` (pkcs8). */
  privatePem: string;
  /** SPKI `PUBLIC KEY`: the file partners host at the well-known path. */
  publicPem: string;
}

export function generateKeyPair(opts: { format?: PrivateKeyFormat } = {}): GeneratedKeyPair {
  const format = opts.format ?? 'sec1';
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return {
    privatePem: privateKey.export({ type: format, format: 'pem' }).toString(),
    publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}
