/**
 * RoutableMessage encode/decode and base64 helpers.
 *
 * Everything arriving from the network goes through `decodeRoutable`, which turns any
 * protobufjs exception (truncated varint, bad wire type, index out of range, recursion
 * limit) into a typed `VcpError('malformed_message')` so no caller crashes on garbage.
 * Unknown fields are kept by protobufjs (`$unknowns`) and re-emitted on encode.
 */
import { VcpError } from './errors.js';
import { UniversalMessage } from './pb.js';

export type RoutableMessage = UniversalMessage.RoutableMessage;
export type RoutableMessageInit = UniversalMessage.IRoutableMessage;

/** Hard cap on a decoded message: the service's own messages are a few hundred bytes. */
export const MAX_ROUTABLE_BYTES = 64 * 1024;

export function encodeRoutable(msg: RoutableMessageInit): Uint8Array {
  return UniversalMessage.RoutableMessage.encode(msg).finish();
}

export interface DecodeOptions {
  /** HTTP status of the thrown error: 502 (default) for vehicle/upstream data, 400 for client input. */
  status?: number;
}

export function decodeRoutable(bytes: Uint8Array, opts: DecodeOptions = {}): RoutableMessage {
  const status = opts.status ?? 502;
  if (!(bytes instanceof Uint8Array)) {
    throw new VcpError('malformed_message', 'Routable message must be binary; check the transport decoding.', { status });
  }
  if (bytes.length > MAX_ROUTABLE_BYTES) {
    throw new VcpError(
      'malformed_message',
      `Routable message is ${bytes.length} bytes, above the ${MAX_ROUTABLE_BYTES}-byte limit; it was not decoded.`,
      { status },
    );
  }
  try {
    return UniversalMessage.RoutableMessage.decode(bytes);
  } catch (cause) {
    throw new VcpError(
      'malformed_message',
      'Could not decode the routable message (not a valid protobuf RoutableMessage); check that the peer speaks the vehicle command protocol.',
      { status, cause },
    );
  }
}

const B64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Standard base64 with padding (what the service's `routable_message` field carries). */
export function toBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

/**
 * Strict standard base64 (padded) → bytes. Node's decoder silently skips invalid
 * characters, so the alphabet and padding are checked first; throws `malformed_message`.
 */
export function fromBase64(text: string, opts: DecodeOptions = {}): Uint8Array {
  const status = opts.status ?? 502;
  if (typeof text !== 'string' || text.length % 4 !== 0 || !B64.test(text)) {
    throw new VcpError('malformed_message', 'Expected standard padded base64; the value is not valid base64.', { status });
  }
  const buf = Buffer.from(text, 'base64');
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
}

export function encodeRoutableBase64(msg: RoutableMessageInit): string {
  return toBase64(encodeRoutable(msg));
}

export function decodeRoutableBase64(text: string, opts: DecodeOptions = {}): RoutableMessage {
  return decodeRoutable(fromBase64(text, opts), opts);
}
