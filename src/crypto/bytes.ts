/** Small byte helpers used across src/crypto (no secrets are compared here: use tagsEqual). */

export function toHex(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.length).toString('hex');
}

/** Strict hex decoding: even length, hex digits only (Buffer.from silently truncates). */
export function fromHex(s: string): Uint8Array {
  if (s.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(s)) throw new TypeError('invalid hex string');
  const b = Buffer.from(s, 'hex');
  return new Uint8Array(b.buffer, b.byteOffset, b.length);
}

/** Equality for public values (addresses, UUIDs, public keys). Not constant-time. */
export function bytesEqual(a: Uint8Array | null | undefined, b: Uint8Array | null | undefined): boolean {
  if (!a || !b || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Copies into a fresh, exactly-sized Uint8Array (detaches from a decoder's shared buffer). */
export function copyBytes(b: Uint8Array): Uint8Array {
  return new Uint8Array(b);
}
