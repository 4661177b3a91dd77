/**
 * Metadata TLV serialization (protocol.md "Metadata serialization").
 *
 * Every authenticated message binds its metadata (signature type, domain, VIN, epoch, …)
 * by serializing it canonically: `tag ‖ len ‖ value` per item, items in strictly
 * ascending tag order, then a terminating 0xFF. The encoding must be injective, so
 * misuse (out-of-order or repeated tags, values longer than 255 bytes) is a programming
 * error and throws instead of producing bytes that some other metadata set could also
 * produce.
 */
import { VcpError } from '../protocol/errors.js';
import { Tag, UINT32_MAX } from './types.js';

function misuse(message: string): VcpError {
  return new VcpError('internal_error', message, { status: 500 });
}

const te = new TextEncoder();

/**
 * Builds one metadata string. Not reusable after `finish()`.
 *
 * Items are written straight into one growing buffer (no per-item arrays): two metadata
 * strings are built per signed command, and the per-item allocations showed in the proxy's
 * CPU profile.
 */
export class MetadataBuilder {
  // A slice of node's shared allocation pool: `new Uint8Array(128)` would get its own
  // zero-filled backing store (typed arrays over 64 bytes live off the V8 heap), a visible
  // cost at two builders per command. Every byte returned is written first; metadata is
  // public (it travels in clear), so sharing the pool's ArrayBuffer is harmless.
  private buf: Uint8Array = Buffer.allocUnsafe(128);
  private length = 0;
  private last = -1;
  private done = false;

  /** Checks the tag and length rules and reserves `tag ‖ len`; returns the value offset. */
  private begin(tag: number, valueLength: number): number {
    if (this.done) throw misuse('metadata already finished; build a new one');
    if (!Number.isInteger(tag) || tag < 0 || tag >= Tag.END) {
      throw misuse(`metadata tag ${tag} is out of range (0..254)`);
    }
    if (tag <= this.last) {
      throw misuse(`metadata tags must be added in strictly ascending order (got ${tag} after ${this.last})`);
    }
    if (valueLength > 255) {
      throw misuse(`metadata value for tag ${tag} is ${valueLength} bytes; the format allows at most 255`);
    }
    // +1 keeps room for the terminator.
    const need = this.length + 2 + valueLength + 1;
    if (need > this.buf.length) {
      const grown = new Uint8Array(Math.max(need, this.buf.length * 2));
      grown.set(this.buf.subarray(0, this.length));
      this.buf = grown;
    }
    this.buf[this.length] = tag;
    this.buf[this.length + 1] = valueLength;
    this.last = tag;
    const at = this.length + 2;
    this.length = at + valueLength;
    return at;
  }

  /** Appends `tag ‖ len ‖ value`. Tags must strictly increase; values ≤ 255 bytes. */
  add(tag: number, value: Uint8Array): this {
    const at = this.begin(tag, value.length);
    this.buf.set(value, at);
    return this;
  }

  /**
   * Appends a string as its UTF-8 bytes (VINs: ASCII, written directly without a
   * TextEncoder round trip; anything else is encoded first).
   */
  addString(tag: number, value: string): this {
    for (let i = 0; i < value.length; i++) {
      if (value.charCodeAt(i) > 0x7f) return this.add(tag, te.encode(value));
    }
    const at = this.begin(tag, value.length);
    for (let i = 0; i < value.length; i++) this.buf[at + i] = value.charCodeAt(i);
    return this;
  }

  /** Appends a big-endian four-byte unsigned integer. */
  addUint32(tag: number, value: number): this {
    checkUint32(value);
    const at = this.begin(tag, 4);
    const b = this.buf;
    b[at] = value >>> 24;
    b[at + 1] = (value >>> 16) & 0xff;
    b[at + 2] = (value >>> 8) & 0xff;
    b[at + 3] = value & 0xff;
    return this;
  }

  /** Appends a one-byte value (signature type, domain). */
  addByte(tag: number, value: number): this {
    if (!Number.isInteger(value) || value < 0 || value > 255) {
      throw misuse(`metadata byte value ${value} for tag ${tag} is out of range`);
    }
    const at = this.begin(tag, 1);
    this.buf[at] = value;
    return this;
  }

  /** Returns the serialized metadata including the terminating 0xFF. */
  finish(): Uint8Array {
    if (this.done) throw misuse('metadata already finished');
    this.done = true;
    this.buf[this.length] = Tag.END;
    // A plain Uint8Array view (not a Buffer) over exactly the written bytes.
    return new Uint8Array(this.buf.buffer, this.buf.byteOffset, this.length + 1);
  }
}

function checkUint32(value: number): void {
  if (!Number.isInteger(value) || value < 0 || value > UINT32_MAX) {
    throw misuse(`value ${value} does not fit in an unsigned 32-bit integer`);
  }
}

/** Big-endian uint32; throws on values that do not fit (a silent wrap would change the MAC input). */
export function uint32be(value: number): Uint8Array {
  checkUint32(value);
  const b = new Uint8Array(4);
  new DataView(b.buffer).setUint32(0, value, false);
  return b;
}

/** One TLV item without the terminator (for the documented examples). */
export function tlv(tag: number, value: Uint8Array): Uint8Array {
  const m = new MetadataBuilder().add(tag, value).finish();
  return m.subarray(0, m.length - 1);
}

/** Serializes a list of items; they must already be in ascending tag order. */
export function serializeMetadata(items: ReadonlyArray<readonly [number, Uint8Array]>): Uint8Array {
  const b = new MetadataBuilder();
  for (const [tag, value] of items) b.add(tag, value);
  return b.finish();
}
