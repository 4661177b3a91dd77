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

/** Builds one metadata string. Not reusable after `finish()`. */
export class MetadataBuilder {
  private readonly parts: Uint8Array[] = [];
  private length = 0;
  private last = -1;
  private done = false;

  /** Appends `tag ‖ len ‖ value`. Tags must strictly increase; values ≤ 255 bytes. */
  add(tag: number, value: Uint8Array): this {
    if (this.done) throw misuse('metadata already finished; build a new one');
    if (!Number.isInteger(tag) || tag < 0 || tag >= Tag.END) {
      throw misuse(`metadata tag ${tag} is out of range (0..254)`);
    }
    if (tag <= this.last) {
      throw misuse(`metadata tags must be added in strictly ascending order (got ${tag} after ${this.last})`);
    }
    if (value.length > 255) {
      throw misuse(`metadata value for tag ${tag} is ${value.length} bytes; the format allows at most 255`);
    }
    const head = new Uint8Array(2);
    head[0] = tag;
    head[1] = value.length;
    this.parts.push(head, value);
    this.length += 2 + value.length;
    this.last = tag;
    return this;
  }

  /** Appends a big-endian four-byte unsigned integer. */
  addUint32(tag: number, value: number): this {
    return this.add(tag, uint32be(value));
  }

  /** Appends a one-byte value (signature type, domain). */
  addByte(tag: number, value: number): this {
    if (!Number.isInteger(value) || value < 0 || value > 255) {
      throw misuse(`metadata byte value ${value} for tag ${tag} is out of range`);
    }
    return this.add(tag, Uint8Array.of(value));
  }

  /** Returns the serialized metadata including the terminating 0xFF. */
  finish(): Uint8Array {
    if (this.done) throw misuse('metadata already finished');
    this.done = true;
    const out = new Uint8Array(this.length + 1);
    let off = 0;
    for (const p of this.parts) {
      out.set(p, off);
      off += p.length;
    }
    out[off] = Tag.END;
    return out;
  }
}

/** Big-endian uint32; throws on values that do not fit (a silent wrap would change the MAC input). */
export function uint32be(value: number): Uint8Array {
  if (!Number.isInteger(value) || value < 0 || value > UINT32_MAX) {
    throw misuse(`value ${value} does not fit in an unsigned 32-bit integer`);
  }
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
