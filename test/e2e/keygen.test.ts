/**
 * `vcproxy keygen` end to end: the CLI writes files that openssl and our keystore accept.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { run } from '../../src/cli/keygen.js';
import { loadKeyFile, parsePublicKey } from '../../src/keys/index.js';

const hasOpenssl = (() => {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

const root = mkdtempSync(join(tmpdir(), 'vcp-keygen-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let out = '';
let err = '';
beforeEach(() => {
  out = '';
  err = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += String(chunk);
    return true;
  });
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    err += String(chunk);
    return true;
  });
});
afterEach(() => vi.restoreAllMocks());

const posix = process.platform !== 'win32';

describe('vcproxy keygen', () => {
  it('creates the directory (0700), a 0600 private key and an SPKI public key, and prints next steps', async () => {
    const dir = join(root, 'new', 'keys');
    expect(await run(['--out', dir, '--domain', 'fleet.example.com'], {})).toBe(0);
    const priv = join(dir, 'private-key.pem');
    const pub = join(dir, 'public-key.pem');
    if (posix) {
      expect(statSync(dir).mode & 0o777).toBe(0o700);
      expect(statSync(priv).mode & 0o777).toBe(0o600);
    }
    expect(readFileSync(priv, 'utf8')).toMatch(/^-----BEGIN EC PRIVATE KEY-----\n/);
    expect(readFileSync(pub, 'utf8')).toMatch(/^-----BEGIN PUBLIC KEY-----\n/);
    const key = loadKeyFile(priv);
    expect(Buffer.from(parsePublicKey(readFileSync(pub, 'utf8'))).equals(Buffer.from(key.publicKey))).toBe(true);
    expect(out).toContain(priv);
    expect(out).toContain(pub);
    expect(out).toContain('https://fleet.example.com/.well-known/appspecific/');
    expect(out).toContain('_ak/fleet.example.com');
    expect(out).toContain(key.fingerprint);
    // The private key itself is never printed.
    for (const line of readFileSync(priv, 'utf8').split('\n').filter((l) => l.length > 20 && !l.startsWith('-----'))) {
      expect(out + err).not.toContain(line);
    }
  });

  it.skipIf(!hasOpenssl)('openssl accepts both files', async () => {
    const dir = join(root, 'openssl');
    expect(await run(['--out', dir], {})).toBe(0);
    // openssl exits non-zero on an invalid key; it reports "EC Key valid." on stderr.
    const check = spawnSync('openssl', ['ec', '-in', join(dir, 'private-key.pem'), '-check', '-noout'], { encoding: 'utf8' });
    expect(check.status).toBe(0);
    expect(check.stdout + check.stderr).toContain('EC Key valid');
    const text = execFileSync('openssl', ['pkey', '-pubin', '-in', join(dir, 'public-key.pem'), '-noout', '-text'], {
      encoding: 'utf8',
    });
    expect(text).toMatch(/prime256v1|P-256/);
  });

  it('--format pkcs8 writes a PRIVATE KEY that loads', async () => {
    const dir = join(root, 'pkcs8');
    expect(await run(['--out', dir, '--format', 'pkcs8'], {})).toBe(0);
    expect(readFileSync(join(dir, 'private-key.pem'), 'utf8')).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
    expect(loadKeyFile(join(dir, 'private-key.pem')).publicKey).toHaveLength(65);
  });

  it('refuses to overwrite an existing key and leaves it untouched', async () => {
    const dir = join(root, 'twice');
    expect(await run(['--out', dir], {})).toBe(0);
    const before = readFileSync(join(dir, 'private-key.pem'), 'utf8');
    err = '';
    expect(await run(['--out', dir], {})).toBe(1);
    expect(err).toContain('already exists');
    expect(err).toContain('refusing to overwrite');
    expect(readFileSync(join(dir, 'private-key.pem'), 'utf8')).toBe(before);
  });

  it('refuses when only the public key file exists', async () => {
    const dir = join(root, 'pubonly');
    expect(await run(['--out', dir], {})).toBe(0);
    rmSync(join(dir, 'private-key.pem'));
    writeFileSync(join(dir, 'public-key.pem'), 'keep me');
    expect(await run(['--out', dir], {})).toBe(1);
    expect(readFileSync(join(dir, 'public-key.pem'), 'utf8')).toBe('keep me');
  });

  it('--help, missing --out, bad --format and unknown flags', async () => {
    expect(await run(['--help'], {})).toBe(0);
    expect(out).toContain('Usage: vcproxy keygen --out DIR');
    expect(await run([], {})).toBe(2);
    expect(err).toContain('--out DIR is required');
    expect(await run(['--out', join(root, 'x'), '--format', 'der'], {})).toBe(2);
    expect(await run(['--bogus'], {})).toBe(2);
  });
});

describe('vcproxy keygen through the real CLI entry point', () => {
  it('runs as a subprocess and exits 0, then 1 on the second run', () => {
    const dir = join(root, 'subprocess');
    const cli = join(import.meta.dirname, '..', '..', 'src', 'cli.ts');
    const tsx = join(import.meta.dirname, '..', '..', 'node_modules', '.bin', 'tsx');
    const stdout = execFileSync(tsx, [cli, 'keygen', '--out', dir], { encoding: 'utf8' });
    expect(stdout).toContain('private-key.pem');
    let code = 0;
    try {
      execFileSync(tsx, [cli, 'keygen', '--out', dir], { stdio: 'pipe' });
    } catch (e) {
      code = (e as { status: number }).status;
    }
    expect(code).toBe(1);
  });
});
