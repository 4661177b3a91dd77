/** keys.example/ is committed test material: it must load (permissions waived) and be consistent. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadKeyFile, parsePublicKey } from '../../../src/keys/index.js';

const dir = join(import.meta.dirname, '..', '..', '..', 'keys.example');

describe('keys.example', () => {
  it('the private key loads and matches public-key.pem', () => {
    const key = loadKeyFile(join(dir, 'private-key.pem'), { allowInsecurePermissions: true });
    const pub = parsePublicKey(readFileSync(join(dir, 'public-key.pem'), 'utf8'));
    expect(Buffer.from(pub).equals(Buffer.from(key.publicKey))).toBe(true);
    expect(key.publicKeyPem()).toBe(readFileSync(join(dir, 'public-key.pem'), 'utf8'));
  });

  it('the README labels it as public test material and says how to chmod and make a real key', () => {
    const readme = readFileSync(join(dir, 'README.md'), 'utf8');
    expect(readme).toContain('PUBLIC TEST MATERIAL');
    expect(readme).toContain('chmod 600');
    expect(readme).toContain('npx vcproxy keygen --out ./keys');
  });
});
