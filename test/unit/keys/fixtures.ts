/**
 * Test fixtures for the keystore, generated at test time (no copied key files). The
 * protocol's published test keys come from vectors/protocol-test-keys.json.
 */
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { inspect } from 'node:util';
import { expect } from 'vitest';
import { VcpError } from '../../../src/protocol/errors.js';
import testKeys from './vectors/protocol-test-keys.json' with { type: 'json' };

export { testKeys };

export const hasOpenssl = (() => {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

export function ecKey(namedCurve: string): KeyObject {
  return generateKeyPairSync('ec', { namedCurve }).privateKey;
}

export function pem(key: KeyObject, type: 'sec1' | 'pkcs8' | 'pkcs1'): string {
  return String(key.export({ type, format: 'pem' } as Parameters<KeyObject['export']>[0]));
}

/** The base64 lines of every PEM block in `text` (used to check nothing leaks). */
export function pemBodyLines(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l.length >= 16 && !l.startsWith('-----') && !l.includes(':'));
}

/**
 * Runs `fn`, expects a VcpError with `code`, and checks that none of `secrets` appears in
 * the message, JSON or inspect output of the error. Returns the error.
 */
export function expectKeyError(fn: () => unknown, code: string, secrets: string[] = []): VcpError {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  expect(caught).toBeInstanceOf(VcpError);
  const err = caught as VcpError;
  expect(err.code).toBe(code);
  const rendered = [err.message, JSON.stringify(err), JSON.stringify(err.toEnvelope()), inspect(err, { depth: 10 }), String(err.stack)];
  for (const s of secrets) {
    for (const r of rendered) expect(r).not.toContain(s);
  }
  return err;
}
