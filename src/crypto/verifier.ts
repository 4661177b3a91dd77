/**
 * Vehicle-side protocol primitives for one domain (VCSEC or infotainment), used by the
 * simulator. Pure: clock and randomness are injected; no roles, no command semantics, no
 * I/O. The simulator decides what an enrolled key may do; this file only answers "is this
 * message authentic, fresh and for me?" and seals answers.
 *
 * Usage (simulator):
 *
 *   const v = new DomainVerifier({
 *     privateScalar,              // 32-byte P-256 scalar of this domain
 *     domain: 3, vin,             // DOMAIN_INFOTAINMENT
 *     now: clock, random,         // injected (ms clock, byte source)
 *     lookup: (pub) => keychain.get(hex(pub)),   // enrolled signer record or undefined
 *   });
 *   // One call per incoming RoutableMessage; returns the encoded answer (or null):
 *   const answer = v.handle(requestBytes, (cmd) => {
 *     // cmd.payload: verified plaintext (VCSEC.UnsignedMessage / CarServer.Action bytes)
 *     // cmd.signer: what lookup returned — apply role policy here
 *     return { payload: responseBytes };          // or { fault: MessageFault_E value }
 *   });
 *   v.rotateEpoch();   // simulate a reboot: new epoch, clock restarts, counters reset
 *
 * Lower-level pieces for fault injection: `answerSessionInfoRequest`, `verifyCommand`,
 * `reply`, `faultReply`, `signedSessionInfo`.
 *
 * Checks, in order (mirroring the reference verifier): signature data present (else
 * BAD_PARAMETER) → addressed to this domain (INVALID_DOMAINS) → signer key enrolled
 * (UNKNOWN_KEY_ID) → epoch, when the message names one (INCORRECT_EPOCH) → expires_at not
 * in the past (TIME_EXPIRED) → expires_at at most `maxTtlSec` ahead (TIME_TO_LIVE_TOO_LONG)
 * → GCM nonce is 12 bytes (IV_INCORRECT_LENGTH) → tag/decryption over metadata built from
 * *our* VIN, domain and epoch (INVALID_SIGNATURE; a command for another VIN lands here,
 * because the VIN is only inside the MAC) → counter (INVALID_TOKEN_OR_COUNTER). Faults
 * after the signer is known carry freshly tagged session info so the client can resync.
 * Checks before the MAC only ever reject, so trusting unauthenticated fields there is safe.
 *
 * Counters (per signer key, reset on a new epoch):
 *  - VCSEC ('strict'): each command's counter must exceed the last accepted one; VCSEC
 *    needs in-order delivery.
 *  - Infotainment ('window'): 32-entry sliding window (window.ts) so commands may arrive
 *    out of order. As in the reference, a command that is out of order (or has counter 0,
 *    which skips the window) must expire within 30 s, else TIME_TO_LIVE_TOO_LONG.
 *
 * Expiry bound: `maxTtlSec` defaults to 120 s. The reference client signs for 5–10 s;
 * 120 s leaves room for slow networks and a simulator clock running faster than real
 * time, while still limiting how long a captured command stays usable.
 *
 * Answers to unknown keys on handshake: a fault UNKNOWN_KEY_ID with operation status
 * ERROR and no session info.
 */
import { UniversalMessage } from '../protocol/pb.js';
import { bytesEqual, copyBytes, toHex } from './bytes.js';
import { ecdhSharedX, publicKeyFromScalar, sessionKey } from './ecdh.js';
import { commandMetadata, requestHash, responseMetadata, SessionKeys } from './hmac.js';
import { encodeSessionInfo } from './session.js';
import { type Clock, DomainNum, FLAG_ENCRYPT_RESPONSE_MASK, type Random, SignatureType, SIZES, UINT32_MAX } from './types.js';
import { updateSlidingWindow } from './window.js';

type RoutableMessage = UniversalMessage.RoutableMessage;
const Fault = UniversalMessage.MessageFault_E;
const OpStatus = UniversalMessage.OperationStatus_E;

/** Seconds a command may be in flight without a usable counter (reference value). */
export const MAX_SECONDS_WITHOUT_COUNTER = 30;
export const DEFAULT_MAX_TTL_SEC = 120;

export interface VerifierOptions<S> {
  /** 32-byte private scalar of this domain's key. */
  privateScalar: Uint8Array;
  /** DOMAIN_VEHICLE_SECURITY (2) or DOMAIN_INFOTAINMENT (3). */
  domain: number;
  vin: string;
  /** Vehicle-local clock in ms. */
  now: Clock;
  /** Source for epochs and response nonces. */
  random: Random;
  /** Enrolled-key lookup by 65-byte public key; returns the signer record or undefined. */
  lookup: (publicKey: Uint8Array) => S | undefined;
  /** Initial epoch (16 bytes); random by default. */
  epoch?: Uint8Array;
  /** Initial clock_time in seconds (default 0: the epoch starts now). */
  clockTime?: number;
  /** Maximum seconds `expires_at` may lie ahead of the vehicle clock (default 120). */
  maxTtlSec?: number;
  /** Counter policy; default 'strict' for VCSEC, 'window' otherwise. */
  counterMode?: 'strict' | 'window';
  /** Echo the request uuid in answers (default true; real VCSEC often omits it). */
  echoRequestUuid?: boolean;
}

/** A command that passed every check. */
export interface VerifiedCommand<S> {
  ok: true;
  payload: Uint8Array;
  counter: number;
  requestHash: Uint8Array;
  signer: S;
  signerPublicKey: Uint8Array;
  method: 'hmac' | 'aes-gcm';
  /** The request set FLAG_ENCRYPT_RESPONSE: `reply` will AES-GCM-seal the answer. */
  encryptResponse: boolean;
  request: RoutableMessage;
}

export interface RejectedCommand {
  ok: false;
  /** `UniversalMessage.MessageFault_E` value. */
  fault: number;
  /** The decoded request (null when it did not decode). */
  request: RoutableMessage | null;
  /** Set when the signer is known: `faultReply` attaches tagged session info. */
  signerPublicKey?: Uint8Array;
}

export type VerifyResult<S> = VerifiedCommand<S> | RejectedCommand;

export interface AppAnswer {
  payload?: Uint8Array;
  fault?: number;
  operationStatus?: number;
  /** Response flags (authenticated in the response metadata). Default 0. */
  flags?: number;
}

interface SignerState {
  keys: SessionKeys;
  counter: number;
  history: number;
}

/** Faults for which the reference vehicle attaches session info. */
const RESYNC_FAULTS: ReadonlySet<number> = new Set([
  Fault.MESSAGEFAULT_ERROR_INCORRECT_EPOCH,
  Fault.MESSAGEFAULT_ERROR_TIME_EXPIRED,
  Fault.MESSAGEFAULT_ERROR_TIME_TO_LIVE_TOO_LONG,
  Fault.MESSAGEFAULT_ERROR_INVALID_SIGNATURE,
  Fault.MESSAGEFAULT_ERROR_INVALID_TOKEN_OR_COUNTER,
  Fault.MESSAGEFAULT_ERROR_BAD_PARAMETER,
]);

export class DomainVerifier<S> {
  readonly domain: number;
  readonly vin: string;
  readonly publicKey: Uint8Array;
  readonly maxTtlSec: number;
  readonly counterMode: 'strict' | 'window';
  private readonly scalar: Uint8Array;
  private readonly now: Clock;
  private readonly random: Random;
  private readonly lookup: (publicKey: Uint8Array) => S | undefined;
  private readonly echoUuid: boolean;
  private readonly signers = new Map<string, SignerState>();
  private epochBytes: Uint8Array;
  private epochStartMs: number;
  private responseCounter = 0;

  constructor(o: VerifierOptions<S>) {
    this.scalar = copyBytes(o.privateScalar);
    this.publicKey = publicKeyFromScalar(this.scalar);
    this.domain = o.domain;
    this.vin = o.vin;
    this.now = o.now;
    this.random = o.random;
    this.lookup = o.lookup;
    this.maxTtlSec = o.maxTtlSec ?? DEFAULT_MAX_TTL_SEC;
    this.counterMode = o.counterMode ?? (o.domain === DomainNum.VEHICLE_SECURITY ? 'strict' : 'window');
    this.echoUuid = o.echoRequestUuid ?? true;
    this.epochBytes = o.epoch ? copyBytes(o.epoch) : this.freshEpoch();
    if (this.epochBytes.length !== SIZES.epoch) throw new RangeError('epoch must be 16 bytes');
    this.epochStartMs = this.now() - (o.clockTime ?? 0) * 1000;
  }

  private freshEpoch(): Uint8Array {
    const e = copyBytes(this.random(SIZES.epoch));
    if (e.length !== SIZES.epoch) throw new RangeError('random source returned the wrong length');
    return e;
  }

  get epoch(): Uint8Array {
    return copyBytes(this.epochBytes);
  }

  /** Seconds since the start of the current epoch (the vehicle clock). */
  clockTime(): number {
    return Math.max(0, Math.floor((this.now() - this.epochStartMs) / 1000));
  }

  /** Simulates a reboot: new epoch (random unless given), clock restarts at 0, counters reset. */
  rotateEpoch(epoch?: Uint8Array): void {
    this.epochBytes = epoch ? copyBytes(epoch) : this.freshEpoch();
    this.epochStartMs = this.now();
    for (const s of this.signers.values()) {
      s.counter = 0;
      s.history = 0;
    }
  }

  /** Drops cached state for a key (e.g. after it was removed from the keychain). */
  forget(publicKey: Uint8Array): void {
    this.signers.delete(toHex(publicKey));
  }

  /** Counter state for a signer (highest accepted counter), 0 if none. */
  counterFor(publicKey: Uint8Array): number {
    return this.signers.get(toHex(publicKey))?.counter ?? 0;
  }

  private state(publicKey: Uint8Array): SignerState | null {
    const id = toHex(publicKey);
    let s = this.signers.get(id);
    if (!s) {
      let k: Uint8Array;
      try {
        k = sessionKey(ecdhSharedX(this.scalar, publicKey));
      } catch {
        return null;
      }
      s = { keys: SessionKeys.fromSharedKey(k), counter: 0, history: 0 };
      this.signers.set(id, s);
    }
    return s;
  }

  /** Encoded SessionInfo for `publicKey` and its tag bound to `challenge`. */
  signedSessionInfo(publicKey: Uint8Array, challenge: Uint8Array): { sessionInfoBytes: Uint8Array; tag: Uint8Array } | null {
    const s = this.state(publicKey);
    if (!s) return null;
    const sessionInfoBytes = encodeSessionInfo({
      counter: s.counter,
      publicKey: this.publicKey,
      epoch: this.epochBytes,
      clockTime: this.clockTime(),
    });
    return { sessionInfoBytes, tag: s.keys.sessionInfoTag(this.vin, challenge, sessionInfoBytes) };
  }

  private decode(request: Uint8Array | RoutableMessage): RoutableMessage | null {
    if (!(request instanceof Uint8Array)) return request;
    try {
      return UniversalMessage.RoutableMessage.decode(request);
    } catch {
      return null;
    }
  }

  /** Envelope of an answer: to/from swapped, request uuid echoed. */
  private answerBase(req: RoutableMessage): UniversalMessage.RoutableMessage.$Properties {
    const from = req.fromDestination;
    const to: UniversalMessage.Destination.$Properties =
      from?.routingAddress && from.routingAddress.length > 0
        ? { routingAddress: from.routingAddress }
        : { domain: from?.domain ?? 0 };
    return {
      toDestination: to,
      fromDestination: { domain: this.domain },
      ...(this.echoUuid && req.uuid && req.uuid.length > 0 ? { requestUuid: req.uuid } : {}),
    };
  }

  /** Answers a session info request (handshake). Returns null if `request` is not one. */
  answerSessionInfoRequest(request: Uint8Array | RoutableMessage): Uint8Array | null {
    const req = this.decode(request);
    const sir = req?.sessionInfoRequest;
    if (!req || !sir) return null;
    const base = this.answerBase(req);
    const pub = sir.publicKey ?? new Uint8Array();
    const known = pub.length === SIZES.publicKey && this.lookup(pub) !== undefined;
    const signed = known ? this.signedSessionInfo(pub, req.uuid ?? new Uint8Array()) : null;
    if (!signed) {
      return UniversalMessage.RoutableMessage.encode({
        ...base,
        signedMessageStatus: {
          operationStatus: OpStatus.OPERATIONSTATUS_ERROR,
          signedMessageFault: Fault.MESSAGEFAULT_ERROR_UNKNOWN_KEY_ID,
        },
      }).finish();
    }
    return UniversalMessage.RoutableMessage.encode({
      ...base,
      sessionInfo: signed.sessionInfoBytes,
      signatureData: { sessionInfoTag: { tag: signed.tag } },
    }).finish();
  }

  /** Authenticates a signed command. Mutates counter state only on success. */
  verifyCommand(request: Uint8Array | RoutableMessage): VerifyResult<S> {
    const req = this.decode(request);
    const reject = (fault: number, signerPublicKey?: Uint8Array): RejectedCommand => ({
      ok: false,
      fault,
      request: req,
      ...(signerPublicKey ? { signerPublicKey } : {}),
    });
    if (!req) return reject(Fault.MESSAGEFAULT_ERROR_DECODING);
    const sd = req.signatureData;
    const hmac = sd?.HMAC_PersonalizedData ?? null;
    const gcm = sd?.AES_GCM_PersonalizedData ?? null;
    if (!sd || (!hmac && !gcm)) return reject(Fault.MESSAGEFAULT_ERROR_BAD_PARAMETER);
    const toDomain = req.toDestination?.domain;
    if (toDomain === undefined || toDomain === null || toDomain !== this.domain) {
      return reject(Fault.MESSAGEFAULT_ERROR_INVALID_DOMAINS);
    }
    const pub = sd.signerIdentity?.publicKey;
    if (!pub || pub.length !== SIZES.publicKey) return reject(Fault.MESSAGEFAULT_ERROR_UNKNOWN_KEY_ID);
    const signer = this.lookup(pub);
    if (signer === undefined) return reject(Fault.MESSAGEFAULT_ERROR_UNKNOWN_KEY_ID);
    const st = this.state(pub);
    if (!st) return reject(Fault.MESSAGEFAULT_ERROR_UNKNOWN_KEY_ID);
    const signerPublicKey = copyBytes(pub);
    const resync = (fault: number) => reject(fault, signerPublicKey);

    const data = (hmac ?? gcm)!;
    const epoch = data.epoch;
    if (epoch && epoch.length > 0 && !bytesEqual(epoch, this.epochBytes)) {
      return resync(Fault.MESSAGEFAULT_ERROR_INCORRECT_EPOCH);
    }
    const now = this.clockTime();
    const expiresAt = (data.expiresAt ?? 0) >>> 0;
    const counter = (data.counter ?? 0) >>> 0;
    if (expiresAt < now) return resync(Fault.MESSAGEFAULT_ERROR_TIME_EXPIRED);
    if (expiresAt - now > this.maxTtlSec) return resync(Fault.MESSAGEFAULT_ERROR_TIME_TO_LIVE_TOO_LONG);
    if (this.counterMode === 'window' && (counter === 0 || counter < st.counter)) {
      if (expiresAt - now > MAX_SECONDS_WITHOUT_COUNTER) return resync(Fault.MESSAGEFAULT_ERROR_TIME_TO_LIVE_TOO_LONG);
    }

    const signatureType = hmac ? SignatureType.HMAC_PERSONALIZED : SignatureType.AES_GCM_PERSONALIZED;
    const metadata = commandMetadata({
      signatureType,
      domain: this.domain,
      vin: this.vin,
      epoch: this.epochBytes,
      expiresAt,
      counter,
      flags: (req.flags ?? 0) >>> 0,
    });
    const body = req.protobufMessageAsBytes ?? new Uint8Array();
    let payload: Uint8Array;
    let tag: Uint8Array;
    if (hmac) {
      tag = hmac.tag ?? new Uint8Array();
      if (!st.keys.verifyCommandTag(metadata, body, tag)) return resync(Fault.MESSAGEFAULT_ERROR_INVALID_SIGNATURE);
      payload = copyBytes(body);
    } else {
      const nonce = gcm!.nonce ?? new Uint8Array();
      if (nonce.length !== SIZES.gcmNonce) return reject(Fault.MESSAGEFAULT_ERROR_IV_INCORRECT_LENGTH, signerPublicKey);
      tag = gcm!.tag ?? new Uint8Array();
      const plain = st.keys.decrypt(nonce, body, tag, metadata);
      if (!plain) return resync(Fault.MESSAGEFAULT_ERROR_INVALID_SIGNATURE);
      payload = plain;
    }

    // Counter last: only authentic messages may advance it.
    if (this.counterMode === 'strict') {
      if (counter <= st.counter) return resync(Fault.MESSAGEFAULT_ERROR_INVALID_TOKEN_OR_COUNTER);
      st.counter = counter;
      st.history = 0;
    } else if (counter > 0) {
      const r = updateSlidingWindow(st, counter);
      if (!r.ok) return resync(Fault.MESSAGEFAULT_ERROR_INVALID_TOKEN_OR_COUNTER);
      st.counter = r.state.counter;
      st.history = r.state.history;
    }

    return {
      ok: true,
      payload,
      counter,
      requestHash: requestHash(signatureType, tag, this.domain),
      signer,
      signerPublicKey,
      method: hmac ? 'hmac' : 'aes-gcm',
      encryptResponse: ((req.flags ?? 0) & FLAG_ENCRYPT_RESPONSE_MASK) !== 0,
      request: req,
    };
  }

  /**
   * Answer to a verified command: AES-GCM-sealed with response metadata when the request
   * asked for it (FLAG_ENCRYPT_RESPONSE), plaintext otherwise. Each sealed answer gets the
   * next response counter.
   */
  reply(cmd: VerifiedCommand<S>, answer: AppAnswer): Uint8Array {
    const base = this.answerBase(cmd.request);
    const fault = answer.fault ?? 0;
    const flags = (answer.flags ?? 0) >>> 0;
    const status =
      fault !== 0 || answer.operationStatus !== undefined
        ? {
            signedMessageStatus: {
              operationStatus: answer.operationStatus ?? (fault !== 0 ? OpStatus.OPERATIONSTATUS_ERROR : OpStatus.OPERATIONSTATUS_OK),
              signedMessageFault: fault,
            },
          }
        : {};
    const payload = answer.payload ?? new Uint8Array();
    if (!cmd.encryptResponse) {
      return UniversalMessage.RoutableMessage.encode({
        ...base,
        ...status,
        protobufMessageAsBytes: payload,
        ...(flags ? { flags } : {}),
      }).finish();
    }
    const st = this.state(cmd.signerPublicKey);
    if (!st) throw new RangeError('signer state vanished');
    if (this.responseCounter >= UINT32_MAX) this.responseCounter = 0;
    const counter = ++this.responseCounter;
    const nonce = copyBytes(this.random(SIZES.gcmNonce));
    const metadata = responseMetadata({
      domain: this.domain,
      vin: this.vin,
      counter,
      flags,
      requestHash: cmd.requestHash,
      fault,
    });
    const sealed = st.keys.encrypt(nonce, payload, metadata);
    return UniversalMessage.RoutableMessage.encode({
      ...base,
      ...status,
      protobufMessageAsBytes: sealed.ciphertext,
      signatureData: { AES_GCM_ResponseData: { nonce, counter, tag: sealed.tag } },
      ...(flags ? { flags } : {}),
    }).finish();
  }

  /**
   * Answer to a rejected command: signedMessageStatus {ERROR, fault}; for resync-able
   * faults from a known signer, session info tagged with the request uuid as challenge.
   * Returns null when the request did not decode (nothing to address an answer to).
   */
  faultReply(rejected: RejectedCommand | { fault: number; request: RoutableMessage; signerPublicKey?: Uint8Array }): Uint8Array | null {
    const req = rejected.request;
    if (!req) return null;
    const base = this.answerBase(req);
    const signed =
      rejected.signerPublicKey && RESYNC_FAULTS.has(rejected.fault)
        ? this.signedSessionInfo(rejected.signerPublicKey, req.uuid ?? new Uint8Array())
        : null;
    return UniversalMessage.RoutableMessage.encode({
      ...base,
      signedMessageStatus: { operationStatus: OpStatus.OPERATIONSTATUS_ERROR, signedMessageFault: rejected.fault },
      ...(signed ? { sessionInfo: signed.sessionInfoBytes, signatureData: { sessionInfoTag: { tag: signed.tag } } } : {}),
    }).finish();
  }

  /**
   * One-stop handling of an incoming RoutableMessage: handshake requests are answered;
   * signed commands are verified and, when authentic, passed to `app` whose answer is
   * sealed. Returns the encoded answer, or null when nothing can be answered.
   */
  handle(request: Uint8Array | RoutableMessage, app: (cmd: VerifiedCommand<S>) => AppAnswer): Uint8Array | null {
    const req = this.decode(request);
    if (!req) return null;
    if (req.sessionInfoRequest) return this.answerSessionInfoRequest(req);
    const r = this.verifyCommand(req);
    if (!r.ok) return this.faultReply(r);
    return this.reply(r, app(r));
  }
}
