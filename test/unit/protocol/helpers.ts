/** Test helpers: hex/bytes and a tiny hand-rolled protobuf wire writer independent of protobufjs. */
export const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
export const unhex = (h: string): Uint8Array => new Uint8Array(Buffer.from(h, 'hex'));

/** Deep-map Uint8Array → hex so decoded objects compare against JSON fixtures. */
export function bytesToHex(v: unknown): unknown {
  if (v instanceof Uint8Array) return hex(v);
  if (Array.isArray(v)) return v.map(bytesToHex);
  if (v && typeof v === 'object') {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, bytesToHex(x)]));
  }
  return v;
}

/** Deep-map lowercase even-length hex strings → base64 (protobufjs fromObject accepts base64 for bytes). */
export function hexToBase64(v: unknown): unknown {
  if (typeof v === 'string' && /^(?:[0-9a-f]{2})+$/.test(v)) return Buffer.from(v, 'hex').toString('base64');
  if (Array.isArray(v)) return v.map(hexToBase64);
  if (v && typeof v === 'object') {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, hexToBase64(x)]));
  }
  return v;
}

// --- hand wire format (field << 3 | wire type) ---
function varint(n: number | bigint): number[] {
  const out: number[] = [];
  let v = BigInt(n);
  if (v < 0n) throw new Error('varint helper takes non-negative values only');
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
  return out;
}
const cat = (...parts: (number[] | Uint8Array)[]): Uint8Array => new Uint8Array(parts.flatMap((p) => [...p]));
/** varint field (wire type 0) */
export const fv = (field: number, n: number | bigint): Uint8Array => cat(varint(field << 3), varint(n));
/** length-delimited field (wire type 2) */
export const fl = (field: number, ...body: Uint8Array[]): Uint8Array => {
  const b = cat(...body);
  return cat(varint((field << 3) | 2), varint(b.length), b);
};
/** fixed32 field (wire type 5), little-endian */
export const f32 = (field: number, n: number): Uint8Array =>
  cat(varint((field << 3) | 5), [n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff]);
export const str = (s: string): Uint8Array => new TextEncoder().encode(s);
export const join = (...parts: Uint8Array[]): Uint8Array => cat(...parts);
