import { execFileSync } from 'node:child_process';
import { createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { KeyErrorCode, loadKeyFile, loadKeyFromPem, parsePublicKey } from '../../../src/keys/index.js';
import { ecKey, expectKeyError, hasOpenssl, pem, pemBodyLines, testKeys } from './fixtures.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const dir = mkdtempSync(join(tmpdir(), 'vcp-keys-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function writeKey(name: string, content: string | Uint8Array, mode = 0o600): string {
  const p = join(dir, name);
  writeFileSync(p, content);
  chmodSync(p, mode);
  return p;
}

describe('loading valid keys', () => {
  it('loads the protocol test client key (SEC1) and derives the documented public point', () => {
    const key = loadKeyFromPem(testKeys.client.privatePem);
    expect(hex(key.publicKey)).toBe(testKeys.client.publicKey);
  });

  it('loads the same key as unencrypted PKCS#8', () => {
    const pkcs8 = pem(createPrivateKey(testKeys.client.privatePem), 'pkcs8');
    expect(pkcs8).toContain('-----BEGIN PRIVATE KEY-----');
    expect(hex(loadKeyFromPem(pkcs8).publicKey)).toBe(testKeys.client.publicKey);
  });

  it('accepts bytes as well as a string, and CRLF line endings', () => {
    const crlf = testKeys.vehicle.privatePem.replace(/\n/g, '\r\n');
    expect(hex(loadKeyFromPem(Buffer.from(crlf)).publicKey)).toBe(testKeys.vehicle.publicKey);
  });

  it('skips an EC PARAMETERS block (what `openssl ecparam -genkey` writes)', () => {
    const params = '-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n';
    expect(hex(loadKeyFromPem(params + testKeys.client.privatePem).publicKey)).toBe(testKeys.client.publicKey);
  });

  it.skipIf(!hasOpenssl)('loads a key made by `openssl ecparam -genkey`', () => {
    const out = execFileSync('openssl', ['ecparam', '-name', 'prime256v1', '-genkey'], { encoding: 'utf8' });
    const key = loadKeyFromPem(out);
    expect(key.publicKey).toHaveLength(65);
  });

  it('loads a 0600 file, and a 0644 file only with allowInsecurePermissions', () => {
    const good = writeKey('good.pem', testKeys.client.privatePem, 0o600);
    expect(hex(loadKeyFile(good).publicKey)).toBe(testKeys.client.publicKey);
    const open = writeKey('open.pem', testKeys.client.privatePem, 0o644);
    expect(hex(loadKeyFile(open, { allowInsecurePermissions: true }).publicKey)).toBe(testKeys.client.publicKey);
  });
});


describe('refusing bad key material (each with its own code, a fix, and no secret)', () => {
  const secretsOf = (text: string) => pemBodyLines(text);

  it.each([
    ['P-384', 'secp384r1'],
    ['P-521', 'secp521r1'],
    ['secp256k1', 'secp256k1'],
  ])('wrong curve %s (SEC1 and PKCS#8)', (label, curve) => {
    const k = ecKey(curve);
    for (const text of [pem(k, 'sec1'), pem(k, 'pkcs8')]) {
      const err = expectKeyError(() => loadKeyFromPem(text, 'k.pem'), KeyErrorCode.WRONG_CURVE, secretsOf(text));
      expect(err.message).toContain(label);
      expect(err.message).toContain('P-256');
      expect(err.message).toContain('keygen');
    }
  });

  it('RSA (PKCS#1 and PKCS#8)', () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    for (const text of [pem(privateKey, 'pkcs1'), pem(privateKey, 'pkcs8')]) {
      const err = expectKeyError(() => loadKeyFromPem(text, 'rsa.pem'), KeyErrorCode.WRONG_TYPE, secretsOf(text));
      expect(err.message).toMatch(/RSA/);
      expect(err.message).toContain('keygen');
    }
  });

  it('Ed25519', () => {
    const text = pem(generateKeyPairSync('ed25519').privateKey, 'pkcs8');
    expectKeyError(() => loadKeyFromPem(text), KeyErrorCode.WRONG_TYPE, secretsOf(text));
  });

  it('encrypted PKCS#8 (node) and legacy encrypted SEC1', () => {
    const k = ecKey('prime256v1');
    const enc8 = k.export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'pw' }).toString();
    expect(enc8).toContain('ENCRYPTED PRIVATE KEY');
    const err = expectKeyError(() => loadKeyFromPem(enc8), KeyErrorCode.ENCRYPTED, secretsOf(enc8));
    expect(err.message).toContain('openssl pkcs8');
    const encSec1 = k.export({ type: 'sec1', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'pw' }).toString();
    expect(encSec1).toContain('Proc-Type: 4,ENCRYPTED');
    expectKeyError(() => loadKeyFromPem(encSec1), KeyErrorCode.ENCRYPTED, secretsOf(encSec1));
  });

  it.skipIf(!hasOpenssl)('encrypted PKCS#8 made by the openssl CLI', () => {
    const plain = writeKey('plain-for-enc.pem', testKeys.client.privatePem);
    const enc = execFileSync('openssl', ['pkcs8', '-topk8', '-v2', 'aes256', '-in', plain, '-passout', 'pass:secret'], {
      encoding: 'utf8',
    });
    const p = writeKey('enc.pem', enc);
    expectKeyError(() => loadKeyFile(p), KeyErrorCode.ENCRYPTED, secretsOf(enc));
  });

  it('empty and whitespace-only files', () => {
    expectKeyError(() => loadKeyFromPem(''), KeyErrorCode.EMPTY);
    expectKeyError(() => loadKeyFromPem(' \n\t\n'), KeyErrorCode.EMPTY);
    const err = expectKeyError(() => loadKeyFile(writeKey('empty.pem', '')), KeyErrorCode.EMPTY);
    expect(err.message).toContain('empty.pem');
  });

  it('corrupt base64 inside the PEM', () => {
    const lines = testKeys.client.privatePem.split('\n');
    lines[2] = (lines[2] ?? '').replace(/^..../, '!!!!');
    const text = lines.join('\n');
    expectKeyError(() => loadKeyFromPem(text), KeyErrorCode.CORRUPT, secretsOf(testKeys.client.privatePem));
  });

  it('valid base64 but corrupt DER, and a truncated file', () => {
    const garbage = '-----BEGIN EC PRIVATE KEY-----\nAAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\n-----END EC PRIVATE KEY-----\n';
    expectKeyError(() => loadKeyFromPem(garbage), KeyErrorCode.CORRUPT);
    const truncated = testKeys.client.privatePem.split('\n').slice(0, 3).join('\n');
    expectKeyError(() => loadKeyFromPem(truncated), KeyErrorCode.CORRUPT, secretsOf(testKeys.client.privatePem));
  });

  it('a stored public point that is not on the curve', () => {
    const der = Buffer.from(pemBodyLines(testKeys.client.privatePem).join(''), 'base64');
    der[der.length - 1]! ^= 0x01;
    const text = `-----BEGIN EC PRIVATE KEY-----\n${der.toString('base64')}\n-----END EC PRIVATE KEY-----\n`;
    expectKeyError(() => loadKeyFromPem(text), KeyErrorCode.CORRUPT, [der.toString('base64')]);
  });

  it('a stored public point that belongs to another key', () => {
    const der = Buffer.from(pemBodyLines(testKeys.client.privatePem).join(''), 'base64');
    Buffer.from(testKeys.vehicle.publicKey, 'hex').copy(der, der.length - 65);
    const text = `-----BEGIN EC PRIVATE KEY-----\n${der.toString('base64')}\n-----END EC PRIVATE KEY-----\n`;
    const err = expectKeyError(() => loadKeyFromPem(text), KeyErrorCode.CORRUPT, [der.toString('base64')]);
    expect(err.message).toContain('does not match');
  });

  it('not PEM: binary DER, random text', () => {
    const der = ecKey('prime256v1').export({ type: 'sec1', format: 'der' });
    const err = expectKeyError(() => loadKeyFromPem(der), KeyErrorCode.NOT_PEM, [der.toString('base64').slice(0, 40)]);
    expect(err.message).toContain('openssl ec -inform DER');
    expectKeyError(() => loadKeyFromPem('hello, this is not a key'), KeyErrorCode.NOT_PEM);
  });

  it('a public key given instead of the private key', () => {
    const err = expectKeyError(() => loadKeyFromPem(testKeys.client.publicPem, 'public-key.pem'), KeyErrorCode.PUBLIC_ONLY);
    expect(err.message).toContain('PRIVATE');
  });

  it('two private keys in one file', () => {
    const text = testKeys.client.privatePem + testKeys.vehicle.privatePem;
    expectKeyError(() => loadKeyFromPem(text), KeyErrorCode.AMBIGUOUS, secretsOf(text));
  });

  it.skipIf(process.platform === 'win32')(
    'a key file readable by group or others, unless explicitly allowed',
    () => {
      for (const mode of [0o640, 0o604, 0o644, 0o666]) {
        const p = writeKey(`mode-${mode.toString(8)}.pem`, testKeys.client.privatePem, mode);
        const err = expectKeyError(() => loadKeyFile(p), KeyErrorCode.INSECURE_PERMISSIONS, secretsOf(testKeys.client.privatePem));
        expect(err.message).toContain(`chmod 600 ${p}`);
      }
      const p = writeKey('mode-400.pem', testKeys.client.privatePem, 0o400);
      expect(hex(loadKeyFile(p).publicKey)).toBe(testKeys.client.publicKey);
    },
  );

  it('a missing file and a directory', () => {
    const err = expectKeyError(() => loadKeyFile(join(dir, 'nope.pem')), KeyErrorCode.UNREADABLE);
    expect(err.message).toContain('does not exist');
    expectKeyError(() => loadKeyFile(dir), KeyErrorCode.UNREADABLE);
  });
});

describe('parsePublicKey', () => {
  const point = testKeys.client.publicKey;

  it('accepts SPKI PEM, raw 65 bytes and hex, all giving the same point', () => {
    expect(hex(parsePublicKey(testKeys.client.publicPem))).toBe(point);
    expect(hex(parsePublicKey(Buffer.from(testKeys.client.publicPem)))).toBe(point);
    expect(hex(parsePublicKey(Buffer.from(point, 'hex')))).toBe(point);
    expect(hex(parsePublicKey(point.toUpperCase()))).toBe(point);
  });

  it('refuses private keys without echoing them, other curves and off-curve points', () => {
    expectKeyError(() => parsePublicKey(testKeys.client.privatePem), 'invalid_public_key', pemBodyLines(testKeys.client.privatePem));
    const p384 = createPublicKey(ecKey('secp384r1')).export({ type: 'spki', format: 'pem' }).toString();
    expectKeyError(() => parsePublicKey(p384), 'invalid_public_key');
    const off = Buffer.from(point, 'hex');
    off[64]! ^= 1;
    expectKeyError(() => parsePublicKey(off), 'invalid_public_key');
    expectKeyError(() => parsePublicKey('04' + '00'.repeat(64)), 'invalid_public_key');
    expectKeyError(() => parsePublicKey('not a key'), 'invalid_public_key');
  });
});
