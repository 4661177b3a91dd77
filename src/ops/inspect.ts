/**
 * Human-readable decoding of protocol messages for debugging (`vcproxy decode`,
 * `vcproxy sign`). Pure: bytes in, plain JSON-ready objects out; bytes are shown as hex.
 *
 * This is a debugging view, not the proxy's message handling: it never authenticates or
 * decrypts anything, and AES-GCM ciphertext is shown as ciphertext. Do not feed its output
 * into logs of the running proxy — a decoded command is a signed payload.
 */
import { CarServer, Signatures, UniversalMessage, VCSEC } from '../protocol/pb.js';
import { VcpError } from '../protocol/errors.js';

/** Message types `decodeAs` understands, by the short names the CLI accepts. */
export const MESSAGE_TYPES = {
  routable: 'UniversalMessage.RoutableMessage',
  'session-info': 'Signatures.SessionInfo',
  'vcsec-unsigned': 'VCSEC.UnsignedMessage',
  'vcsec-from': 'VCSEC.FromVCSECMessage',
  'carserver-action': 'CarServer.Action',
  'carserver-response': 'CarServer.Response',
} as const;
export type MessageTypeName = keyof typeof MESSAGE_TYPES;

interface PbType {
  decode(r: Uint8Array): object;
  toObject(m: never, o?: object): Record<string, unknown>;
}

const TYPES: Record<MessageTypeName, PbType> = {
  routable: UniversalMessage.RoutableMessage as unknown as PbType,
  'session-info': Signatures.SessionInfo as unknown as PbType,
  'vcsec-unsigned': VCSEC.UnsignedMessage as unknown as PbType,
  'vcsec-from': VCSEC.FromVCSECMessage as unknown as PbType,
  'carserver-action': CarServer.Action as unknown as PbType,
  'carserver-response': CarServer.Response as unknown as PbType,
};

export interface Decoded {
  type: string;
  message: Record<string, unknown>;
  /** Present when part of the input was not understood (unknown fields were skipped). */
  warnings?: string[];
}

export interface DecodedRoutable extends Decoded {
  /** The payload decoded by domain and direction, or why it could not be. */
  payload?: Decoded | { encrypted: true; note: string } | { error: string };
  /** `session_info` decoded as Signatures.SessionInfo (handshake answers). */
  sessionInfo?: Decoded | { error: string };
}

export function toHex(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
}

/**
 * Parses text as hex or base64 (standard or URL-safe, padding optional). Whitespace is
 * ignored. Text that is valid hex is read as hex unless `encoding` says otherwise.
 */
export function parseBytes(text: string, encoding: 'auto' | 'hex' | 'base64' = 'auto'): Uint8Array {
  const s = text.replace(/\s+/g, '');
  if (s === '') throw invalidEncoding('the input is empty');
  const isHex = /^(?:[0-9a-fA-F]{2})+$/.test(s);
  if (encoding === 'hex' || (encoding === 'auto' && isHex)) {
    if (!isHex) throw invalidEncoding('the input is not hex (an even number of 0-9a-f digits)');
    return new Uint8Array(Buffer.from(s, 'hex'));
  }
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(s) || s.replace(/=+$/, '').length % 4 === 1) {
    throw invalidEncoding('the input is neither hex nor base64');
  }
  return new Uint8Array(Buffer.from(s.replace(/-/g, '+').replace(/_/g, '/'), 'base64'));
}

function invalidEncoding(why: string): VcpError {
  return new VcpError('invalid_encoding', `Cannot read the message: ${why}. Pass the routable message as base64 or hex.`, {
    status: 400,
  });
}

/** Replaces every byte array in a toObject() result by its hex string. */
function hexify(v: unknown): unknown {
  if (v instanceof Uint8Array) return toHex(v);
  if (Array.isArray(v)) return v.map(hexify);
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = hexify(x);
    return out;
  }
  return v;
}

/**
 * Decodes bytes as one message type. Throws `invalid_message` (400) when the bytes are not
 * that message: protobuf decoding fails, or nothing in them is a known field.
 */
export function decodeAs(name: MessageTypeName, bytes: Uint8Array): Decoded {
  const T = TYPES[name];
  const typeName = MESSAGE_TYPES[name];
  let msg: object;
  try {
    msg = T.decode(bytes);
  } catch (err) {
    throw new VcpError(
      'invalid_message',
      `The bytes are not a valid ${typeName} (${err instanceof Error ? err.message : 'decode error'}). ` +
        'Check that you copied the whole message and chose the right type.',
      { status: 400, cause: err },
    );
  }
  // Session info is small and every field matters (counter 0 is a real value), so show
  // defaults there; elsewhere omit them to keep big CarServer messages readable.
  const defaults = name === 'session-info';
  const message = hexify(T.toObject(msg as never, { longs: Number, enums: String, oneofs: true, defaults })) as Record<
    string,
    unknown
  >;
  if (bytes.length > 0 && Object.keys(hexify(T.toObject(msg as never)) as object).length === 0) {
    throw new VcpError(
      'invalid_message',
      `The bytes contain no field of ${typeName}; they are probably another message type or not protobuf at all.`,
      { status: 400 },
    );
  }
  const out: Decoded = { type: typeName, message };
  // The generated code keeps fields this build does not know in `$unknowns` (and re-encodes
  // them); count them so the reader knows part of the message is not shown.
  const unknown = unknownBytes(msg, 0);
  if (unknown > 0) out.warnings = [`${unknown} byte(s) were not understood (fields this build does not know)`];
  return out;
}

/** Total size of the unknown fields kept by the decoder, in a message and its sub-messages. */
function unknownBytes(v: unknown, depth: number): number {
  if (depth > 64 || v === null || typeof v !== 'object' || v instanceof Uint8Array) return 0;
  if (Array.isArray(v)) return v.reduce((n: number, x) => n + unknownBytes(x, depth + 1), 0);
  let n = 0;
  const u = (v as { $unknowns?: unknown }).$unknowns;
  if (Array.isArray(u)) for (const b of u) if (b instanceof Uint8Array) n += b.length;
  for (const x of Object.values(v)) n += unknownBytes(x, depth + 1);
  return n;
}

const DOMAIN_VEHICLE_SECURITY = 2;
const DOMAIN_INFOTAINMENT = 3;

/** Which message type a payload is, from the domain it goes to or comes from. */
function payloadType(toDomain: number | undefined, fromDomain: number | undefined): MessageTypeName | undefined {
  if (toDomain === DOMAIN_VEHICLE_SECURITY) return 'vcsec-unsigned';
  if (toDomain === DOMAIN_INFOTAINMENT) return 'carserver-action';
  if (fromDomain === DOMAIN_VEHICLE_SECURITY) return 'vcsec-from';
  if (fromDomain === DOMAIN_INFOTAINMENT) return 'carserver-response';
  return undefined;
}

/**
 * Decodes a RoutableMessage and, where possible, its payload: commands by the domain they
 * go to (VCSEC UnsignedMessage / CarServer Action), answers by the domain they come from
 * (FromVCSECMessage / CarServer Response), and handshake session info.
 */
export function decodeRoutable(bytes: Uint8Array): DecodedRoutable {
  const top = decodeAs('routable', bytes);
  const rm = UniversalMessage.RoutableMessage.decode(bytes);
  const out: DecodedRoutable = { ...top };

  const payload = rm.protobufMessageAsBytes;
  if (rm.payload === 'protobufMessageAsBytes' && payload) {
    const sig = rm.signatureData;
    if (sig?.AES_GCM_PersonalizedData || sig?.AES_GCM_ResponseData) {
      out.payload = {
        encrypted: true,
        note: 'AES-GCM ciphertext; only the session key can open it (use `vcproxy sign` to see what was signed)',
      };
    } else {
      const t = payloadType(rm.toDestination?.domain ?? undefined, rm.fromDestination?.domain ?? undefined);
      if (!t) out.payload = { error: 'no domain in to/from destination, so the payload type is unknown' };
      else {
        try {
          out.payload = decodeAs(t, payload);
        } catch (err) {
          out.payload = { error: err instanceof Error ? err.message : String(err) };
        }
      }
    }
  }
  if (rm.payload === 'sessionInfo' && rm.sessionInfo) {
    try {
      out.sessionInfo = decodeAs('session-info', rm.sessionInfo);
    } catch (err) {
      out.sessionInfo = { error: err instanceof Error ? err.message : String(err) };
    }
  }
  return out;
}

/**
 * Finds the message in what a user pasted: raw base64/hex, or a JSON answer/request
 * carrying it (`{"response": "…"}` from signed_command, `{"routable_message": "…"}`).
 */
export function extractMessageText(input: string): string {
  const t = input.trim();
  if (!t.startsWith('{')) return t;
  let parsed: unknown;
  try {
    parsed = JSON.parse(t);
  } catch {
    throw invalidEncoding('it starts with "{" but is not valid JSON');
  }
  const obj = parsed as Record<string, unknown>;
  for (const k of ['routable_message', 'response']) {
    const v = obj[k];
    if (typeof v === 'string') return v;
  }
  throw invalidEncoding('the JSON has no "routable_message" or "response" string');
}
