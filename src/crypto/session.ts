/**
 * Client-side session with one vehicle domain (protocol.md "Handshake", "Authorizing
 * commands", "Response handling").
 *
 * Lifecycle:
 *   1. `buildSessionInfoRequest({domain, publicKey, random})` → send `bytes`; keep the result
 *      (its `uuid` is the challenge the vehicle's tag is bound to).
 *   2. `openSessionInfoResponse(answer, request)` → `{sessionInfoBytes, tag}` (or a fault).
 *   3. `Session.fromHandshake({key, vin, domain, challenge, sessionInfoBytes, tag, now})`
 *      authenticates the SessionInfo and creates the session.
 *   4. `session.signCommand(payload, {expiresInSec, now, random})` → send `bytes`; keep the
 *      returned `pending`. Every call increments the counter — retransmissions included.
 *   5. `session.openResponse(answer, pending)` → payload, a protocol fault (with any
 *      session info the vehicle attached), or "ignore this message".
 *   6. On a fault that carries session info: `session.adopt({challenge: pending.uuid, …})`
 *      then re-sign. Adopt follows the protocol's update rules (below).
 *
 * Persistence (`toJSON`/`fromJSON`): the JSON holds no private key and no K. K is
 * re-derived on load with ECDH(client key, vehicle public key) — one scalar multiplication
 * (~0.1 ms) buys a store that cannot be used to forge commands if it leaks. The JSON does
 * hold the epoch, counter and clock offset, which are not secrets (they travel in clear).
 *
 * Clock model: at receipt of a SessionInfo we record `clockOffsetMs = clock_time·1000 −
 * now`. The vehicle's time at local time t is `floor((t + clockOffsetMs) / 1000)`, and
 * `expires_at = floor((now + offset + expiresInSec·1000) / 1000)`.
 *
 * Memory: one 80-byte key buffer (K ‖ session-info key ‖ K'), the 16-byte epoch, the
 * 65-byte vehicle key, a few numbers and the VIN — well under 1 KB per session. The
 * client public key is a shared reference to the `CommandKey`'s bytes.
 *
 * Not here: deciding when to resync or resend (src/session/), the "request UUID used in
 * the last several seconds" freshness rule for session info (the caller knows its pending
 * requests and must only pass session info that answers one of them), any I/O.
 */
import { Signatures, UniversalMessage } from '../protocol/pb.js';
import { VcpError } from '../protocol/errors.js';
import { bytesEqual, copyBytes, fromHex, toHex } from './bytes.js';
import { assertPublicKey, sessionKey } from './ecdh.js';
import { commandMetadata, requestHash, responseMetadata, SessionKeys } from './hmac.js';
import {
  type CommandKey,
  DomainNum,
  FLAG_ENCRYPT_RESPONSE_MASK,
  type Random,
  SignatureType,
  SIZES,
  UINT32_MAX,
} from './types.js';
import { SlidingWindow } from './window.js';

type RoutableMessage = UniversalMessage.RoutableMessage;

/** A decoded SessionInfo with the fields the client uses. */
export interface SessionInfoFields {
  counter: number;
  publicKey: Uint8Array;
  epoch: Uint8Array;
  clockTime: number;
  status: number;
  handle: number;
}

/** Decodes SessionInfo bytes; throws `bad_vehicle_response` on malformed input. */
export function decodeSessionInfo(bytes: Uint8Array): SessionInfoFields {
  let m: Signatures.SessionInfo;
  try {
    m = Signatures.SessionInfo.decode(bytes);
  } catch (cause) {
    throw badResponse('the vehicle sent session info that does not decode', cause);
  }
  return {
    counter: m.counter >>> 0,
    publicKey: copyBytes(m.publicKey ?? new Uint8Array()),
    epoch: copyBytes(m.epoch ?? new Uint8Array()),
    clockTime: m.clockTime >>> 0,
    status: m.status ?? 0,
    handle: m.handle >>> 0,
  };
}

export function encodeSessionInfo(f: Omit<SessionInfoFields, 'status' | 'handle'> & { status?: number; handle?: number }): Uint8Array {
  return Signatures.SessionInfo.encode({
    counter: f.counter,
    publicKey: f.publicKey,
    epoch: f.epoch,
    clockTime: f.clockTime,
    status: f.status ?? 0,
    handle: f.handle ?? 0,
  }).finish();
}

function badResponse(what: string, cause?: unknown): VcpError {
  return new VcpError('bad_vehicle_response', `${what}; retry the handshake (a fresh session info request).`, {
    status: 502,
    temporary: true,
    cause,
  });
}

function resyncRequired(message: string): VcpError {
  return new VcpError('session_resync_required', message, { status: 503, temporary: true });
}

// ---------------------------------------------------------------------------------------
// Handshake request / response

/** What the caller keeps after sending a request, to match and open the answer. */
export interface PendingRequest {
  /** The RoutableMessage uuid we sent (also the session-info challenge). */
  uuid: Uint8Array;
  /** Our from_destination.routing_address; the answer's to_destination must match. */
  routingAddress: Uint8Array;
  /** Domain we addressed; the answer's from_destination.domain must match. */
  domain: number;
  /** Request hash (signed commands only); binds an encrypted answer to this request. */
  requestHash?: Uint8Array;
  /** Response counters seen for this request (anti-replay, per request). */
  responses: SlidingWindow;
}

export interface BuiltRequest {
  bytes: Uint8Array;
  /** The challenge: pass it to `Session.fromHandshake` / `adopt`. */
  uuid: Uint8Array;
  routingAddress: Uint8Array;
  pending: PendingRequest;
}

function randomExact(random: Random, n: number): Uint8Array {
  const b = random(n);
  if (b.length !== n) throw new VcpError('internal_error', `random source returned ${b.length} bytes, expected ${n}`);
  return copyBytes(b);
}

/**
 * Handshake request: to_destination.domain, a random 16-byte routing address, the client
 * public key, and a random 16-byte uuid (the challenge; unpredictable so that a recorded
 * session-info answer cannot be replayed). Randomness is drawn as routingAddress, uuid.
 */
export function buildSessionInfoRequest(o: { domain: number; publicKey: Uint8Array; random: Random }): BuiltRequest {
  assertPublicKey(o.publicKey, 'client public key');
  const routingAddress = randomExact(o.random, SIZES.routingAddress);
  const uuid = randomExact(o.random, SIZES.uuid);
  const bytes = UniversalMessage.RoutableMessage.encode({
    toDestination: { domain: o.domain },
    fromDestination: { routingAddress },
    sessionInfoRequest: { publicKey: o.publicKey },
    uuid,
  }).finish();
  return {
    bytes,
    uuid,
    routingAddress,
    pending: { uuid, routingAddress, domain: o.domain, responses: new SlidingWindow() },
  };
}

/** Why an incoming message was not accepted as the answer to a request. */
export type IgnoreReason =
  | 'malformed' // does not decode, or lacks required fields
  | 'not_for_this_request' // routing address / domain / request uuid do not match
  | 'replayed' // response counter already seen for this request
  | 'downgraded' // a plaintext result from a vehicle that has already encrypted its answers
  | 'undecryptable'; // AES-GCM response failed authentication

export type HandshakeAnswer =
  | { kind: 'session_info'; sessionInfoBytes: Uint8Array; tag: Uint8Array }
  | { kind: 'fault'; fault: number; operationStatus: number }
  | { kind: 'ignored'; reason: IgnoreReason };

function decodeMessage(message: Uint8Array | RoutableMessage): RoutableMessage | null {
  if (!(message instanceof Uint8Array)) return message;
  try {
    return UniversalMessage.RoutableMessage.decode(message);
  } catch {
    return null;
  }
}

/**
 * Does `m` answer `pending`? The vehicle swaps to/from: to_destination is our routing
 * address, from_destination our domain. request_uuid must echo our uuid when present;
 * VCSEC usually leaves it empty (memory constraints), infotainment must set it.
 */
function answersRequest(m: RoutableMessage, pending: PendingRequest): boolean {
  if (!bytesEqual(m.toDestination?.routingAddress ?? undefined, pending.routingAddress)) return false;
  if ((m.fromDestination?.domain ?? -1) !== pending.domain) return false;
  const ru = m.requestUuid;
  if (ru && ru.length > 0) return bytesEqual(ru, pending.uuid);
  return pending.domain === DomainNum.VEHICLE_SECURITY;
}

/** Extracts the (not yet authenticated) session info + tag from a handshake answer. */
export function openSessionInfoResponse(message: Uint8Array | RoutableMessage, request: BuiltRequest | PendingRequest): HandshakeAnswer {
  const pending = 'pending' in request ? request.pending : request;
  const m = decodeMessage(message);
  if (!m) return { kind: 'ignored', reason: 'malformed' };
  if (!answersRequest(m, pending)) return { kind: 'ignored', reason: 'not_for_this_request' };
  const fault = m.signedMessageStatus?.signedMessageFault ?? 0;
  if (fault !== 0) return { kind: 'fault', fault, operationStatus: m.signedMessageStatus?.operationStatus ?? 0 };
  const info = m.sessionInfo;
  const tag = m.signatureData?.sessionInfoTag?.tag;
  if (!info || info.length === 0 || !tag || tag.length === 0) return { kind: 'ignored', reason: 'malformed' };
  return { kind: 'session_info', sessionInfoBytes: copyBytes(info), tag: copyBytes(tag) };
}

// ---------------------------------------------------------------------------------------
// Session

export interface HandshakeInput {
  key: CommandKey;
  vin: string;
  domain: number;
  /** The uuid of the session info request this answers. */
  challenge: Uint8Array;
  sessionInfoBytes: Uint8Array;
  tag: Uint8Array;
  /** Local time (ms) when the answer was received. */
  now: number;
}

export type AdoptResult =
  | { adopted: true; epochChanged: boolean }
  | { adopted: false; reason: 'bad_tag' | 'malformed' | 'key_mismatch' | 'key_not_paired' | 'stale_clock' };

export interface SignOptions {
  /** Lifetime of the command in seconds (vehicle clock). */
  expiresInSec: number;
  /**
   * The exact `flags` mask to send and authenticate. Default FLAG_ENCRYPT_RESPONSE (0x2),
   * which clients should always set; pass a mask without it only to reproduce legacy
   * traffic (e.g. the protocol.md example, which predates the flag).
   */
  flags?: number;
  /** Local time in ms. */
  now: number;
  random: Random;
  /** 'hmac' (default; what the Fleet API accepts) or 'aes-gcm' (encrypted payload). */
  method?: 'hmac' | 'aes-gcm';
  /** Reuse a routing address instead of drawing a fresh one. */
  routingAddress?: Uint8Array;
}

export interface SignedCommand {
  /** Encoded RoutableMessage. */
  bytes: Uint8Array;
  counter: number;
  uuid: Uint8Array;
  requestHash: Uint8Array;
  routingAddress: Uint8Array;
  /** Vehicle-clock second after which the vehicle rejects the command. */
  expiresAt: number;
  pending: PendingRequest;
}

export type OpenedResponse =
  | {
      kind: 'ok';
      payload: Uint8Array;
      /** True when the answer was AES-GCM encrypted (and therefore authenticated). */
      encrypted: boolean;
      /** Response counter (encrypted answers only). */
      counter?: number;
      operationStatus: number;
    }
  | {
      kind: 'fault';
      /** `UniversalMessage.MessageFault_E` value. */
      fault: number;
      operationStatus: number;
      /** Session info the vehicle attached (unauthenticated until `adopt` checks the tag). */
      sessionInfo?: { sessionInfoBytes: Uint8Array; tag: Uint8Array };
      /** Payload, if the fault answer carried one (decrypted when it was encrypted). */
      payload?: Uint8Array;
      encrypted: boolean;
    }
  | { kind: 'ignored'; reason: IgnoreReason };

export interface SessionJSON {
  v: 1;
  vin: string;
  domain: number;
  clientPublicKey: string;
  vehiclePublicKey: string;
  epoch: string;
  counter: number;
  /** clock_time of the last authenticated session info (adopt's staleness rule). */
  setTime: number;
  clockOffsetMs: number;
  /** The vehicle has encrypted an answer of this session (see `openResponse`); optional for older JSON. */
  encryptedAnswers?: boolean;
}

/**
 * Byte layout of a session's bytes: derived keys (SessionKeys uses the first 80 bytes),
 * then the vehicle public key, then the epoch. One region instead of three typed arrays
 * keeps a cached session under 1 KB (three cost ~1.6 KB of RSS: each typed array carries
 * its own backing store and bookkeeping; measured by bench/memory.ts).
 */
const MEM_VEHICLE_KEY = 80;
const MEM_EPOCH = MEM_VEHICLE_KEY + SIZES.publicKey;
const MEM_SIZE = MEM_EPOCH + SIZES.epoch;
const MEM_STRIDE = (MEM_SIZE + 7) & ~7;

/**
 * Session bytes are carved from 8 KB slabs reserved for session state (never shared with
 * I/O buffers, unlike Buffer's pool, so no network buffer's `.buffer` can reach a key). A
 * typed array with its own ArrayBuffer costs ~750 B of RSS for these 161 bytes; a view into
 * a slab ~400 B. A slab is freed when every session carved from it is gone; the trade-off
 * is that one long-lived session can keep its 8 KB slab alive.
 */
const SLAB_BYTES = 8192;
let slab: ArrayBuffer | undefined;
let slabUsed = 0;

function sessionMemory(k: Uint8Array): { mem: Uint8Array; keys: SessionKeys } {
  if (!slab || slabUsed + MEM_STRIDE > SLAB_BYTES) {
    slab = new ArrayBuffer(SLAB_BYTES);
    slabUsed = 0;
  }
  const mem = new Uint8Array(slab, slabUsed, MEM_SIZE);
  slabUsed += MEM_STRIDE;
  return { mem, keys: SessionKeys.fromSharedKey(k, mem) };
}

/**
 * The signer's public key bytes, read once per key. `CommandKey.publicKey` may hand out a
 * fresh copy on every read (LocalKey does, so callers cannot alter its identity); this copy
 * is only ever given to the protobuf encoder, which does not write to it.
 */
const SIGNER_BYTES = new WeakMap<CommandKey, Uint8Array>();
function signerKeyBytes(key: CommandKey): Uint8Array {
  let b = SIGNER_BYTES.get(key);
  if (!b) SIGNER_BYTES.set(key, (b = key.publicKey));
  return b;
}

export class Session {
  readonly vin: string;
  readonly domain: number;
  private readonly key: CommandKey;
  /** Derived keys; their storage also holds the vehicle key and the epoch (see MEM_*). */
  private readonly keys: SessionKeys;
  private counterValue: number;
  private setTime: number;
  private offsetMs: number;
  /**
   * Set once the vehicle has answered with AES-GCM response data. We always request
   * encrypted answers (FLAG_ENCRYPT_RESPONSE); firmware before 2024.38 ignores the flag, so
   * a first plaintext answer must be accepted. But a vehicle that has encrypted once keeps
   * doing so, so a later plaintext *result* can only come from someone between us and the
   * vehicle forging "result: true" — refuse it. (The reference client accepts it; we are
   * stricter on purpose.) Sticky across resyncs and persisted with the session.
   */
  private encryptedAnswers = false;

  private constructor(
    key: CommandKey,
    keys: SessionKeys,
    mem: Uint8Array,
    vin: string,
    domain: number,
    vehicleKey: Uint8Array,
    epoch: Uint8Array,
    counter: number,
    setTime: number,
    offsetMs: number,
  ) {
    this.key = key;
    this.keys = keys;
    mem.set(vehicleKey, MEM_VEHICLE_KEY);
    mem.set(epoch, MEM_EPOCH);
    this.vin = vin;
    this.domain = domain;
    this.counterValue = counter;
    this.setTime = setTime;
    this.offsetMs = offsetMs;
  }

  /** Views into the session's storage (internal use only; the public getters return copies). */
  private get vehicleKey(): Uint8Array {
    return this.keys.view(MEM_VEHICLE_KEY, SIZES.publicKey);
  }
  private get epochBytes(): Uint8Array {
    return this.keys.view(MEM_EPOCH, SIZES.epoch);
  }

  /**
   * Authenticates a SessionInfo answer and creates the session. Throws `VcpError`:
   * `bad_vehicle_response` (does not decode, bad tag, bad fields), `key_not_paired`
   * (SessionInfo status KEY_NOT_ON_WHITELIST), `invalid_public_key`.
   */
  static fromHandshake(h: HandshakeInput): Session {
    const info = decodeSessionInfo(h.sessionInfoBytes);
    const notPaired = info.status === Signatures.Session_Info_Status.SESSION_INFO_STATUS_KEY_NOT_ON_WHITELIST;
    if (info.publicKey.length !== SIZES.publicKey) {
      // Without the vehicle key there is no K to check the tag with. A forged "not paired"
      // is only a denial of service, which an on-path attacker has anyway.
      if (notPaired) throw keyNotPaired();
      throw badResponse('the vehicle session info has a malformed public key');
    }
    const { mem, keys } = sessionMemory(sessionKey(h.key.sharedSecretX(info.publicKey)));
    // Tag first: nothing in an unauthenticated SessionInfo is trusted.
    if (!keys.verifySessionInfoTag(h.vin, h.challenge, h.sessionInfoBytes, h.tag)) {
      throw badResponse('the vehicle session info failed authentication (wrong tag, VIN or challenge)');
    }
    if (notPaired) throw keyNotPaired();
    if (info.status !== Signatures.Session_Info_Status.SESSION_INFO_STATUS_OK) {
      throw badResponse(`the vehicle session info has unknown status ${info.status}`);
    }
    checkInfoShape(info);
    return new Session(
      h.key,
      keys,
      mem,
      h.vin,
      h.domain,
      info.publicKey,
      info.epoch,
      info.counter,
      info.clockTime,
      info.clockTime * 1000 - h.now,
    );
  }

  /** Restores a session saved with `toJSON`. Re-derives K with `key` (no secret in the JSON). */
  static fromJSON(json: unknown, key: CommandKey): Session {
    const j = json as Partial<SessionJSON> | null;
    const bad = (what: string) =>
      new VcpError('invalid_session_state', `Stored session state is invalid (${what}); discard it and run a new handshake.`, {
        status: 500,
        temporary: true,
      });
    if (!j || typeof j !== 'object' || j.v !== 1) throw bad('version');
    if (typeof j.vin !== 'string' || j.vin.length === 0 || j.vin.length > 255) throw bad('vin');
    if (!isUint(j.domain, 255)) throw bad('domain');
    if (!isUint(j.counter, UINT32_MAX) || !isUint(j.setTime, UINT32_MAX)) throw bad('counter');
    if (typeof j.clockOffsetMs !== 'number' || !Number.isFinite(j.clockOffsetMs)) throw bad('clock');
    let vehicleKey: Uint8Array;
    let epoch: Uint8Array;
    let clientKey: Uint8Array;
    try {
      vehicleKey = fromHex(String(j.vehiclePublicKey));
      epoch = fromHex(String(j.epoch));
      clientKey = fromHex(String(j.clientPublicKey));
    } catch {
      throw bad('hex');
    }
    if (epoch.length !== SIZES.epoch) throw bad('epoch');
    if (!bytesEqual(clientKey, key.publicKey)) throw bad('saved for a different client key');
    // sharedSecretX refuses anything but a 65-byte uncompressed point, so it fits `mem`.
    const { mem, keys } = sessionMemory(sessionKey(key.sharedSecretX(vehicleKey)));
    const s = new Session(key, keys, mem, j.vin, j.domain, vehicleKey, epoch, j.counter, j.setTime, j.clockOffsetMs);
    s.encryptedAnswers = j.encryptedAnswers === true;
    return s;
  }

  toJSON(): SessionJSON {
    return {
      v: 1,
      vin: this.vin,
      domain: this.domain,
      clientPublicKey: toHex(this.key.publicKey),
      vehiclePublicKey: toHex(this.vehicleKey),
      epoch: toHex(this.epochBytes),
      counter: this.counterValue,
      setTime: this.setTime,
      clockOffsetMs: this.offsetMs,
      ...(this.encryptedAnswers ? { encryptedAnswers: true } : {}),
    };
  }

  get counter(): number {
    return this.counterValue;
  }
  get epoch(): Uint8Array {
    return copyBytes(this.epochBytes);
  }
  get vehiclePublicKey(): Uint8Array {
    return copyBytes(this.vehicleKey);
  }
  get clockOffsetMs(): number {
    return this.offsetMs;
  }
  /** The vehicle's clock (seconds into its epoch) at local time `now` (ms). */
  vehicleTime(now: number): number {
    return Math.floor((now + this.offsetMs) / 1000);
  }

  /**
   * Applies session info the vehicle sent (typically with a fault). Rules:
   *  - discard it unless its tag verifies for our VIN and `challenge` (the uuid of the
   *    request it answers);
   *  - discard it if it names a different vehicle public key;
   *  - same epoch: discard a clock earlier than the last authenticated one; otherwise
   *    update clock, and the counter only upwards (never roll back within an epoch);
   *  - new epoch: take epoch, clock and counter as given (the vehicle rebooted).
   */
  adopt(a: { challenge: Uint8Array; sessionInfoBytes: Uint8Array; tag: Uint8Array; now: number }): AdoptResult {
    if (!this.keys.verifySessionInfoTag(this.vin, a.challenge, a.sessionInfoBytes, a.tag)) {
      return { adopted: false, reason: 'bad_tag' };
    }
    let info: SessionInfoFields;
    try {
      info = decodeSessionInfo(a.sessionInfoBytes);
      checkInfoShape(info);
    } catch {
      return { adopted: false, reason: 'malformed' };
    }
    if (!bytesEqual(info.publicKey, this.vehicleKey)) return { adopted: false, reason: 'key_mismatch' };
    if (info.status !== Signatures.Session_Info_Status.SESSION_INFO_STATUS_OK) return { adopted: false, reason: 'key_not_paired' };
    const sameEpoch = bytesEqual(info.epoch, this.epochBytes);
    if (sameEpoch) {
      if (info.clockTime < this.setTime) return { adopted: false, reason: 'stale_clock' };
      if (info.counter > this.counterValue) this.counterValue = info.counter;
    } else {
      this.epochBytes.set(info.epoch); // length checked by checkInfoShape
      this.counterValue = info.counter;
    }
    this.setTime = info.clockTime;
    this.offsetMs = info.clockTime * 1000 - a.now;
    return { adopted: true, epochChanged: !sameEpoch };
  }

  /**
   * Signs `payload` (an encoded VCSEC.UnsignedMessage or CarServer.Action) for this
   * domain. Increments the counter first; every transmission, including a resend of the
   * same payload, must go through here and gets a new counter, uuid and tag.
   * Randomness is drawn as routingAddress (unless given), uuid, then nonce (aes-gcm).
   */
  signCommand(payload: Uint8Array, o: SignOptions): SignedCommand {
    if (!(o.expiresInSec > 0) || !Number.isFinite(o.expiresInSec)) {
      throw new VcpError('internal_error', 'expiresInSec must be a positive number of seconds');
    }
    if (this.counterValue >= UINT32_MAX) {
      throw resyncRequired('The session counter is exhausted; run a new handshake with the vehicle.');
    }
    const expiresAt = Math.floor((o.now + this.offsetMs + o.expiresInSec * 1000) / 1000);
    if (expiresAt < 0 || expiresAt > UINT32_MAX) {
      throw resyncRequired('The session clock is out of range; run a new handshake with the vehicle.');
    }
    const flags = o.flags ?? FLAG_ENCRYPT_RESPONSE_MASK;
    if (!Number.isInteger(flags) || flags < 0 || flags > UINT32_MAX) {
      throw new VcpError('internal_error', 'flags must be an unsigned 32-bit mask');
    }
    const method = o.method ?? 'hmac';
    const routingAddress = o.routingAddress ? copyBytes(o.routingAddress) : randomExact(o.random, SIZES.routingAddress);
    const uuid = randomExact(o.random, SIZES.uuid);

    this.counterValue += 1;
    const counter = this.counterValue;
    const signatureType = method === 'hmac' ? SignatureType.HMAC_PERSONALIZED : SignatureType.AES_GCM_PERSONALIZED;
    const metadata = commandMetadata({
      signatureType,
      domain: this.domain,
      vin: this.vin,
      epoch: this.epochBytes,
      expiresAt,
      counter,
      flags,
    });

    let body: Uint8Array;
    let tag: Uint8Array;
    let signatureData: Signatures.SignatureData.$Properties;
    const signerIdentity = { publicKey: signerKeyBytes(this.key) };
    if (method === 'hmac') {
      body = payload;
      tag = this.keys.commandTag(metadata, payload);
      signatureData = {
        signerIdentity,
        HMAC_PersonalizedData: { epoch: this.epochBytes, counter, expiresAt, tag },
      };
    } else {
      const nonce = randomExact(o.random, SIZES.gcmNonce);
      const sealed = this.keys.encrypt(nonce, payload, metadata);
      body = sealed.ciphertext;
      tag = sealed.tag;
      signatureData = {
        signerIdentity,
        AES_GCM_PersonalizedData: { epoch: this.epochBytes, nonce, counter, expiresAt, tag },
      };
    }
    const bytes = UniversalMessage.RoutableMessage.encode({
      toDestination: { domain: this.domain },
      fromDestination: { routingAddress },
      protobufMessageAsBytes: body,
      signatureData,
      uuid,
      flags,
    }).finish();
    const rh = requestHash(signatureType, tag, this.domain);
    return {
      bytes,
      counter,
      uuid,
      requestHash: rh,
      routingAddress,
      expiresAt,
      pending: { uuid, routingAddress, domain: this.domain, requestHash: rh, responses: new SlidingWindow() },
    };
  }

  /**
   * Opens the vehicle's answer to a signed command.
   *  - Not addressed to this request (routing address / domain / request uuid) → ignored.
   *  - `AES_GCM_ResponseData` present → decrypt with the response metadata (the fault is
   *    authenticated too); failure → ignored('undecryptable'); a response counter already
   *    seen for this request → ignored('replayed').
   *  - Otherwise the payload is plaintext (vehicles before 2024.38 ignore the flag).
   *  - `signedMessageStatus.signed_message_fault` ≠ NONE → `fault`, with any attached
   *    session info (pass it to `adopt` with `challenge: pending.uuid`).
   */
  openResponse(message: Uint8Array | RoutableMessage, pending: PendingRequest): OpenedResponse {
    const m = decodeMessage(message);
    if (!m) return { kind: 'ignored', reason: 'malformed' };
    if (!answersRequest(m, pending)) return { kind: 'ignored', reason: 'not_for_this_request' };
    const fault = m.signedMessageStatus?.signedMessageFault ?? 0;
    const operationStatus = m.signedMessageStatus?.operationStatus ?? 0;

    let payload: Uint8Array | undefined = m.protobufMessageAsBytes ? copyBytes(m.protobufMessageAsBytes) : undefined;
    let encrypted = false;
    let counter: number | undefined;
    const gcm = m.signatureData?.AES_GCM_ResponseData;
    if (gcm) {
      if (!pending.requestHash) return { kind: 'ignored', reason: 'malformed' };
      counter = (gcm.counter ?? 0) >>> 0;
      // Check the window before decrypting (cheap), record only after authenticating.
      if (!pending.responses.wouldAccept(counter)) return { kind: 'ignored', reason: 'replayed' };
      const metadata = responseMetadata({
        domain: m.fromDestination?.domain ?? 0,
        vin: this.vin,
        counter,
        flags: m.flags ?? 0,
        requestHash: pending.requestHash,
        fault,
      });
      const plain = this.keys.decrypt(gcm.nonce ?? new Uint8Array(), payload ?? new Uint8Array(), gcm.tag ?? new Uint8Array(), metadata);
      if (!plain) return { kind: 'ignored', reason: 'undecryptable' };
      pending.responses.accept(counter);
      payload = plain;
      encrypted = true;
      this.encryptedAnswers = true;
    }

    if (fault !== 0) {
      const info = m.sessionInfo;
      const tag = m.signatureData?.sessionInfoTag?.tag;
      return {
        kind: 'fault',
        fault,
        operationStatus,
        encrypted,
        ...(info && info.length > 0 && tag && tag.length > 0
          ? { sessionInfo: { sessionInfoBytes: copyBytes(info), tag: copyBytes(tag) } }
          : {}),
        ...(payload ? { payload } : {}),
      };
    }
    // Faults above may be plaintext (they only lead to a resync); a result may not, once
    // this vehicle has shown it encrypts (see `encryptedAnswers`).
    if (!encrypted && this.encryptedAnswers) return { kind: 'ignored', reason: 'downgraded' };
    return {
      kind: 'ok',
      payload: payload ?? new Uint8Array(),
      encrypted,
      ...(counter !== undefined ? { counter } : {}),
      operationStatus,
    };
  }
}

function keyNotPaired(): VcpError {
  return new VcpError(
    'key_not_paired',
    'The vehicle does not know this public key. Pair the key with the vehicle (enroll it), then retry.',
    { status: 403 },
  );
}

function checkInfoShape(info: SessionInfoFields): void {
  if (info.epoch.length !== SIZES.epoch) throw badResponse('the vehicle session info has a malformed epoch');
  if (info.publicKey.length !== SIZES.publicKey) throw badResponse('the vehicle session info has a malformed public key');
}

function isUint(v: unknown, max: number): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= max;
}
