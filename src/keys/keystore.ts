/**
 * Loading the command key from PEM, and public keys from the encodings partners use.
 *
 * Accepted: SEC1 (`EC PRIVATE KEY`, optionally preceded by `EC PARAMETERS` as
 * `openssl ecparam -genkey` writes it) and unencrypted PKCS#8 (`PRIVATE KEY`), on P-256 only.
 * Everything else is refused with a specific `key_*` code and a message that says how to fix
 * it. We classify the PEM label ourselves before handing the DER to OpenSSL, because
 * OpenSSL's own error for most of these cases is the same opaque "DECODER routines::unsupported".
 */
import { closeSync, fstatSync, openSync, readFileSync } from 'node:fs';
import { createECDH, createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { basename } from 'node:path';
import { VcpError } from '../protocol/errors.js';
import { KEYGEN_HINT, KeyErrorCode, keyError } from './errors.js';
import { LocalKey } from './local-key.js';

/** Larger than any sane key file; stops us from slurping a wrong path (a log, a disk image). */
const MAX_KEY_FILE_BYTES = 64 * 1024;

export interface LoadKeyOptions {
  /**
   * Accept a key file readable by group/others. Only for throwaway test material (e.g. the
   * committed `keys.example/`, whose mode git does not preserve).
   */
  allowInsecurePermissions?: boolean;
}

interface PemBlock {
  label: string;
  headers: string;
  body: string;
}

const BEGIN_RE = /-----BEGIN ([A-Z0-9 ]+)-----/g;

function parsePemBlocks(text: string, name: string): PemBlock[] {
  const blocks: PemBlock[] = [];
  for (const m of text.matchAll(BEGIN_RE)) {
    const label = m[1] ?? '';
    const start = (m.index ?? 0) + m[0].length;
    const endMarker = `-----END ${label}-----`;
    const end = text.indexOf(endMarker, start);
    if (end < 0) {
      throw keyError(
        KeyErrorCode.CORRUPT,
        `${name}: the PEM block "${label}" has no matching END line; the file is truncated or damaged. ` +
          `Restore it from your backup, or ${lower(KEYGEN_HINT)} (and pair the new key).`,
      );
    }
    const inner = text.slice(start, end);
    // RFC 1421 headers (legacy OpenSSL encryption) are "Name: value" lines before a blank line.
    const headerEnd = inner.search(/\r?\n\r?\n/);
    const hasHeaders = /^\s*[A-Za-z-]+:/.test(inner) && headerEnd >= 0;
    blocks.push({
      label,
      headers: hasHeaders ? inner.slice(0, headerEnd) : '',
      body: hasHeaders ? inner.slice(headerEnd) : inner,
    });
  }
  return blocks;
}

function lower(s: string): string {
  return s.charAt(0).toLowerCase() + s.slice(1);
}

function decodeBase64Strict(body: string, name: string, label: string): Buffer {
  const compact = body.replace(/\s+/g, '');
  if (compact.length === 0 || compact.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(compact)) {
    throw keyError(
      KeyErrorCode.CORRUPT,
      `${name}: the base64 inside the "${label}" block is damaged (invalid characters or length). ` +
        `Restore the file from your backup, or ${lower(KEYGEN_HINT)} (and pair the new key).`,
    );
  }
  return Buffer.from(compact, 'base64');
}

const PUBLIC_LABELS = new Set(['PUBLIC KEY', 'EC PUBLIC KEY', 'RSA PUBLIC KEY', 'CERTIFICATE', 'TRUSTED CERTIFICATE']);
const PRIVATE_LABELS = new Set(['EC PRIVATE KEY', 'PRIVATE KEY']);

function describeCurve(curve: string | undefined): string {
  switch (curve) {
    case 'secp384r1':
      return 'P-384';
    case 'secp521r1':
      return 'P-521';
    case 'secp256k1':
      return 'secp256k1';
    default:
      return curve ?? 'an unknown curve';
  }
}

/**
 * Parses a private key PEM and returns a `LocalKey`. `name` (a file name, never the content)
 * is used in error messages.
 */
export function loadKeyFromPem(pem: string | Uint8Array, name = 'key'): LocalKey {
  const text = typeof pem === 'string' ? pem : Buffer.from(pem).toString('latin1');
  if (text.trim().length === 0) {
    throw keyError(KeyErrorCode.EMPTY, `${name} is empty. ${KEYGEN_HINT}, or point the proxy at the right file.`);
  }
  const blocks = parsePemBlocks(text, name);
  if (blocks.length === 0) {
    throw keyError(
      KeyErrorCode.NOT_PEM,
      `${name} is not a PEM file (no "-----BEGIN ...-----" line). If it is binary DER, convert it with ` +
        '`openssl ec -inform DER -in FILE -out key.pem`; otherwise ' +
        lower(KEYGEN_HINT) +
        '.',
    );
  }
  const candidates = blocks.filter((b) => b.label !== 'EC PARAMETERS');
  if (candidates.some((b) => b.label === 'ENCRYPTED PRIVATE KEY' || /Proc-Type:\s*4,\s*ENCRYPTED/i.test(b.headers))) {
    throw keyError(
      KeyErrorCode.ENCRYPTED,
      `${name} is password-protected; the proxy needs an unencrypted key (protect it with file ` +
        'permissions instead). Decrypt it with `openssl pkcs8 -in FILE -out key.pem` (PKCS#8) or ' +
        '`openssl ec -in FILE -out key.pem` (SEC1), then `chmod 600 key.pem`.',
    );
  }
  const privates = candidates.filter((b) => PRIVATE_LABELS.has(b.label));
  if (privates.length === 0) {
    const first = candidates[0];
    if (first && PUBLIC_LABELS.has(first.label)) {
      throw keyError(
        KeyErrorCode.PUBLIC_ONLY,
        `${name} holds a public key ("${first.label}"), but the proxy needs the matching PRIVATE key ` +
          '(a PEM file labelled "EC PRIVATE KEY" or "PRIVATE KEY", as `vcproxy keygen` writes). ' +
          'The public key is what you host at the well-known path.',
      );
    }
    const label = first?.label ?? 'EC PARAMETERS';
    const rsa = label.startsWith('RSA ');
    throw keyError(
      KeyErrorCode.WRONG_TYPE,
      `${name} holds a "${label}" block${rsa ? ' (an RSA key)' : ''}; the protocol needs an EC private key on ` +
        `NIST P-256 (prime256v1). ${KEYGEN_HINT} or \`openssl ecparam -name prime256v1 -genkey -noout -out key.pem\`.`,
    );
  }
  if (privates.length > 1) {
    throw keyError(
      KeyErrorCode.AMBIGUOUS,
      `${name} contains ${privates.length} private keys; keep exactly one private key per file.`,
    );
  }
  const block = privates[0] as PemBlock;
  const der = decodeBase64Strict(block.body, name, block.label);
  let keyObject: KeyObject;
  try {
    keyObject = createPrivateKey({ key: der, format: 'der', type: block.label === 'PRIVATE KEY' ? 'pkcs8' : 'sec1' });
  } catch {
    throw keyError(
      KeyErrorCode.CORRUPT,
      `${name}: the "${block.label}" block could not be parsed (damaged DER, or a public point that is not on ` +
        `the curve). Restore the file from your backup, or ${lower(KEYGEN_HINT)} (and pair the new key).`,
    );
  } finally {
    der.fill(0); // best effort: this buffer held the private key's DER
  }
  return fromKeyObject(keyObject, name);
}

function fromKeyObject(keyObject: KeyObject, name: string): LocalKey {
  const type = keyObject.asymmetricKeyType;
  if (type !== 'ec') {
    throw keyError(
      KeyErrorCode.WRONG_TYPE,
      `${name} is ${type === 'rsa' || type === 'rsa-pss' ? 'an RSA' : `a ${type ?? 'non-EC'}`} key; the protocol needs an EC ` +
        `key on NIST P-256 (prime256v1). ${KEYGEN_HINT}.`,
    );
  }
  const curve = keyObject.asymmetricKeyDetails?.namedCurve;
  if (curve !== 'prime256v1') {
    throw keyError(
      KeyErrorCode.WRONG_CURVE,
      `${name} is an EC key on ${describeCurve(curve)}; the protocol only supports NIST P-256 (prime256v1). ` +
        `${KEYGEN_HINT}.`,
    );
  }
  const jwk = keyObject.export({ format: 'jwk' });
  if (typeof jwk.d !== 'string' || typeof jwk.x !== 'string' || typeof jwk.y !== 'string') {
    throw keyError(KeyErrorCode.CORRUPT, `${name}: the key has no private part. ${KEYGEN_HINT}.`);
  }
  const scalar = Buffer.from(jwk.d, 'base64url');
  try {
    if (scalar.length !== 32) {
      throw keyError(KeyErrorCode.CORRUPT, `${name}: the private scalar has the wrong length. ${KEYGEN_HINT}.`);
    }
    // SEC1 may carry the public point next to the scalar; make sure the two agree so we never
    // announce one identity and sign with another.
    const derived = derivePublic(scalar);
    const claimed = Buffer.concat([Buffer.of(0x04), Buffer.from(jwk.x, 'base64url'), Buffer.from(jwk.y, 'base64url')]);
    if (derived === undefined || !claimed.equals(derived)) {
      throw keyError(
        KeyErrorCode.CORRUPT,
        `${name}: the public key stored in the file does not match its private key; the file is damaged. ` +
          `${KEYGEN_HINT}.`,
      );
    }
    return LocalKey.fromScalar(scalar);
  } finally {
    scalar.fill(0);
  }
}

function derivePublic(scalar: Buffer): Buffer | undefined {
  try {
    const ecdh = createECDH('prime256v1');
    ecdh.setPrivateKey(scalar);
    return ecdh.getPublicKey();
  } catch {
    return undefined;
  }
}

/**
 * Reads and parses a key file. Refuses files readable by group/others (mode & 0o077) unless
 * `allowInsecurePermissions`: a world-readable command key lets any local user drive the
 * fleet. The mode is checked on the opened descriptor (fstat), so the file we check is the
 * file we read.
 */
export function loadKeyFile(path: string, opts: LoadKeyOptions = {}): LocalKey {
  const name = basename(path);
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (e) {
    throw unreadable(path, e);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) {
      throw keyError(KeyErrorCode.UNREADABLE, `${path} is not a regular file; point the proxy at the private key PEM file.`);
    }
    // POSIX permission bits are meaningless on Windows (node reports 0o666), so skip there.
    if (process.platform !== 'win32' && (st.mode & 0o077) !== 0 && !opts.allowInsecurePermissions) {
      throw keyError(
        KeyErrorCode.INSECURE_PERMISSIONS,
        `${path} is readable by other users (mode ${(st.mode & 0o777).toString(8).padStart(3, '0')}). ` +
          `Run \`chmod 600 ${path}\` so only the proxy's user can read the command key.`,
      );
    }
    if (st.size > MAX_KEY_FILE_BYTES) {
      throw keyError(KeyErrorCode.NOT_PEM, `${path} is ${st.size} bytes, far too large for a key file; check the path.`);
    }
    const content = readFileSync(fd);
    try {
      return loadKeyFromPem(content, name);
    } finally {
      content.fill(0);
    }
  } finally {
    closeSync(fd);
  }
}

function unreadable(path: string, e: unknown): VcpError {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  const why =
    code === 'ENOENT'
      ? 'does not exist'
      : code === 'EACCES'
        ? 'cannot be read by this user (permission denied)'
        : code === 'EISDIR'
          ? 'is a directory'
          : `cannot be opened (${code ?? 'unknown error'})`;
  return keyError(
    KeyErrorCode.UNREADABLE,
    `The key file ${path} ${why}. Check the path, or ${lower(KEYGEN_HINT)}.`,
  );
}

/**
 * Parses a P-256 public key given as SPKI PEM (`PUBLIC KEY`), a 65-byte uncompressed point,
 * or its 130-character hex. Returns the 65-byte point. Throws `invalid_public_key` (400).
 */
export function parsePublicKey(input: string | Uint8Array): Uint8Array {
  const bad = (why: string): VcpError =>
    new VcpError(
      'invalid_public_key',
      `Invalid public key: ${why}. Give a P-256 public key as PEM ("-----BEGIN PUBLIC KEY-----"), ` +
        'or as the 65-byte uncompressed point (130 hex characters starting with 04).',
      { status: 400 },
    );
  if (typeof input !== 'string') {
    if (input.length === 65 && input[0] === 0x04) return checkPoint(Uint8Array.from(input), bad);
    return parsePublicKey(Buffer.from(input).toString('latin1'));
  }
  const trimmed = input.trim();
  if (/^[0-9a-fA-F]{130}$/.test(trimmed)) {
    return checkPoint(Uint8Array.from(Buffer.from(trimmed, 'hex')), bad);
  }
  let blocks: PemBlock[];
  try {
    blocks = parsePemBlocks(trimmed, 'public key');
  } catch {
    throw bad('truncated PEM');
  }
  const block = blocks.find((b) => b.label === 'PUBLIC KEY');
  if (!block) {
    if (blocks.some((b) => PRIVATE_LABELS.has(b.label) || b.label === 'ENCRYPTED PRIVATE KEY')) {
      // Never parse (or echo) a private key handed to a public-key slot.
      throw bad('this is a PRIVATE key; give the public key instead (`openssl pkey -in key.pem -pubout`)');
    }
    throw bad('not a PEM public key or hex point');
  }
  let der: Buffer;
  try {
    der = decodeBase64Strict(block.body, 'public key', block.label);
  } catch {
    throw bad('damaged base64');
  }
  let jwk: { kty?: string; crv?: string; x?: string; y?: string };
  try {
    const key = createPublicKey({ key: der, format: 'der', type: 'spki' });
    if (key.asymmetricKeyType !== 'ec') throw bad(`a ${key.asymmetricKeyType ?? 'non-EC'} key, not EC P-256`);
    if (key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
      throw bad(`an EC key on ${describeCurve(key.asymmetricKeyDetails?.namedCurve)}, not P-256`);
    }
    jwk = key.export({ format: 'jwk' });
  } catch (e) {
    if (e instanceof VcpError) throw e;
    throw bad('the DER could not be parsed or the point is not on the curve');
  }
  if (typeof jwk.x !== 'string' || typeof jwk.y !== 'string') throw bad('no point');
  return checkPoint(
    Uint8Array.from(Buffer.concat([Buffer.of(0x04), Buffer.from(jwk.x, 'base64url'), Buffer.from(jwk.y, 'base64url')])),
    bad,
  );
}

const PROBE = Buffer.alloc(32, 0x11);

function checkPoint(point: Uint8Array, bad: (why: string) => VcpError): Uint8Array {
  if (point.length !== 65 || point[0] !== 0x04) throw bad('not a 65-byte uncompressed point');
  try {
    // OpenSSL validates the point (on curve, not infinity) when using it; nothing secret here.
    const probe = createECDH('prime256v1');
    probe.setPrivateKey(PROBE);
    probe.computeSecret(point);
  } catch {
    throw bad('the point is not on the P-256 curve');
  }
  return point;
}
