/**
 * The signed-command dispatcher: session per (VIN, domain), sign, send, authenticate the
 * answer, resync, and decide — conservatively — what may be resent.
 *
 * Safety rules (why the code looks the way it does):
 * - Every transmission is signed afresh (`session.signCommand` increments the counter), and
 *   the session is written to the store BEFORE the message is sent, so no counter is ever
 *   used twice, even across a crash with a persistent store.
 * - A command is resent only when the vehicle provably refused it: an authenticated fault
 *   whose table row says `mayHaveSucceeded: false` (epoch/counter/clock/busy faults), a 421
 *   (the service did not route it), or a failure before any byte left (connect refused).
 *   After a timeout, a lost connection, a 5xx or an answer we cannot authenticate, the
 *   vehicle may have executed it: we answer 503/504 `may_have_executed` and never resend
 *   (honking twice is a bug).
 * - Handshakes (session info requests) have no side effects, so their failures are always
 *   "nothing executed" and may be retried.
 * - Commands to one VIN run through the `VinQueue` in arrival order; the handshake for a
 *   (VIN, domain) therefore happens once even under a burst.
 */
import { randomBytes, randomFillSync } from 'node:crypto';
import type { Logger } from 'pino';
import { VcpError } from '../protocol/errors.js';
import { domainName, type DomainId } from '../protocol/domains.js';
import { faultError, faultInfo } from '../protocol/faults.js';
import { fromBase64, toBase64 } from '../protocol/routable.js';
import { interpretAnswer } from '../protocol/response.js';
import type { CommandKey, Random } from '../crypto/types.js';
import { Session, buildSessionInfoRequest, openSessionInfoResponse, type SignedCommand } from '../crypto/session.js';
import type { Upstream, UpstreamResponse } from '../transport/client.js';
import type { AbortLike } from '../transport/abort.js';
import { classifyStatus, ambiguousStatus } from '../transport/classify.js';
import type { UpstreamRouter } from '../transport/upstream.js';
import { ExpiringSet } from '../transport/lru.js';
import { silentLogger } from '../log.js';
import { MemorySessionStore, type SessionStore } from './store.js';
import { MemoryVinQueue, type VinQueue } from './queue.js';
import type { CommandDispatcher, DispatchOutcome, SignedCommandRequest } from './types.js';

export interface DispatcherOptions {
  key: CommandKey;
  upstream: Upstream;
  router: UpstreamRouter;
  sessions?: SessionStore<Session>;
  queue?: VinQueue;
  logger?: Logger;
  now?: () => number;
  random?: Random;
  /** Backoff sleep; injectable so tests need not wait. */
  sleep?: (ms: number, signal?: AbortLike) => Promise<void>;
  /** Key-pairing link host and the developer domain it names. */
  pairingUrl: string;
  developerDomain?: string | undefined;
  /** Transmissions of one command (first try + resyncs/retries). Default 3. */
  maxAttempts?: number;
  /** How long a VIN stays marked "no signed commands" after a 422. Default 1 h. */
  unsupportedTtlMs?: number;
  unsupportedLimit?: number;
  /** Longest command lifetime we sign, whatever the budget. Default 30 s. */
  maxExpiresInSec?: number;
  /**
   * Event hooks (metrics, per-request log counts). The request object is the one given to
   * `execute`, so a caller can attribute the event to its own request.
   */
  events?: { handshake(domain: number, req: SignedCommandRequest): void; resync(domain: number, req: SignedCommandRequest): void } | undefined;
}

const USER_AGENT = 'vehicle-command-proxy/0.1';

function defaultSleep(ms: number, signal?: AbortLike): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(clientClosed());
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(t);
      reject(clientClosed());
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function clientClosed(): VcpError {
  return new VcpError('client_closed_request', 'The client closed the request before the command was sent.', { status: 499 });
}

/** The one error for "we cannot know whether the vehicle executed it". */
export function mayHaveExecuted(status: 503 | 504 | 502, why: string, cause?: unknown): VcpError {
  return new VcpError(
    'may_have_executed',
    `${why} The command may have executed: check the vehicle state before retrying (it was not resent).`,
    { status, mayHaveSucceeded: true, temporary: true, cause },
  );
}

/**
 * Random bytes (routing addresses, uuids, GCM nonces: public values, but the handshake uuid
 * must be unpredictable) drawn from a 4 KB buffer that `randomFillSync` refills: one OpenSSL
 * call per ~100 commands instead of two or three per command (`randomBytes` was ~3% of the
 * proxy's CPU at 16 connections). Every draw is copied out; no pool byte is handed out twice.
 */
export function pooledRandom(size = 4096): Random {
  const pool = Buffer.allocUnsafeSlow(size);
  let used = size;
  return (n: number): Uint8Array => {
    if (n > size) return new Uint8Array(randomBytes(n));
    if (used + n > size) {
      randomFillSync(pool);
      used = 0;
    }
    const out = new Uint8Array(n);
    out.set(pool.subarray(used, used + n));
    used += n;
    return out;
  };
}

const RESPONSE_PREFIX = Buffer.from('{"response":"');
const RESPONSE_SUFFIX = Buffer.from('"}');

/**
 * The string `response` field of the service's answer envelope, or undefined. The common
 * exact shape `{"response":"<base64>"}` is sliced without a JSON parse (only when the value
 * holds no quote or backslash, so no escape can change its meaning); any other shape —
 * whitespace, more fields, escapes — goes through JSON.parse.
 */
export function responseField(body: Buffer): string | undefined {
  const p = RESPONSE_PREFIX.length;
  const end = body.length - RESPONSE_SUFFIX.length;
  if (end >= p && body.subarray(0, p).equals(RESPONSE_PREFIX) && body.subarray(end).equals(RESPONSE_SUFFIX)) {
    const inner = body.subarray(p, end);
    if (inner.indexOf(0x22) < 0 && inner.indexOf(0x5c) < 0) return inner.toString('utf8');
  }
  try {
    const j = JSON.parse(body.toString('utf8')) as { response?: unknown };
    return typeof j?.response === 'string' ? j.response : undefined;
  } catch {
    return undefined;
  }
}

/** The service's 408 for a vehicle that is not connected (so nothing was delivered to it). */
function vehicleNotOnline(body: Buffer): boolean {
  return /offline|asleep|not online/i.test(body.subarray(0, 4096).toString('utf8'));
}

type SessionOrOutcome = { session: Session; origin: string } | { outcome: DispatchOutcome };

export class SessionDispatcher implements CommandDispatcher {
  private readonly key: CommandKey;
  private readonly upstream: Upstream;
  private readonly router: UpstreamRouter;
  readonly sessions: SessionStore<Session>;
  private readonly queue: VinQueue;
  private readonly log: Logger;
  private readonly now: () => number;
  private readonly random: Random;
  private readonly sleep: (ms: number, signal?: AbortLike) => Promise<void>;
  private readonly maxAttempts: number;
  private readonly maxExpiresInSec: number;
  private readonly unsupported: ExpiringSet<string>;
  private readonly remedyCtx: { pairingUrl: string; developerDomain: string };
  private readonly events: DispatcherOptions['events'];

  constructor(o: DispatcherOptions) {
    this.key = o.key;
    this.upstream = o.upstream;
    this.router = o.router;
    this.sessions = o.sessions ?? new MemorySessionStore<Session>();
    this.queue = o.queue ?? new MemoryVinQueue();
    this.log = o.logger ?? silentLogger();
    this.now = o.now ?? Date.now;
    this.random = o.random ?? pooledRandom();
    this.sleep = o.sleep ?? defaultSleep;
    this.maxAttempts = o.maxAttempts ?? 3;
    this.maxExpiresInSec = o.maxExpiresInSec ?? 30;
    this.events = o.events;
    this.unsupported = new ExpiringSet(o.unsupportedLimit ?? 10_000, o.unsupportedTtlMs ?? 3_600_000, this.now);
    this.remedyCtx = {
      pairingUrl: o.pairingUrl.replace(/\/+$/, ''),
      developerDomain: o.developerDomain ?? '<your-developer-domain>',
    };
  }

  isUnsupported(vin: string): boolean {
    return this.unsupported.has(vin);
  }

  execute(req: SignedCommandRequest): Promise<DispatchOutcome> {
    return this.queue.run(req.vin, () => this.run(req), req.signal);
  }

  /** The key-pairing link owners open to approve this application's key. */
  private pairingLink(): string {
    return `${this.remedyCtx.pairingUrl}/_ak/${this.remedyCtx.developerDomain}`;
  }

  private keyNotPaired(domain: number): VcpError {
    return new VcpError(
      'key_not_paired',
      `The vehicle does not know this application's key (${domainName(domain)}). Pair it: open ${this.pairingLink()} on the phone with the vehicle's app and approve the key, then retry.`,
      { status: 403 },
    );
  }

  private faultToError(fault: number): VcpError {
    const info = faultInfo(fault);
    if (info.code === 'key_not_paired') {
      const e = faultError(fault, this.remedyCtx);
      return new VcpError(e.code, e.message, { status: 403 });
    }
    return faultError(fault, this.remedyCtx);
  }

  private post(origin: string, req: SignedCommandRequest, bytes: Uint8Array): Promise<UpstreamResponse> {
    const headers: Record<string, string> = {};
    const extra = req.forwardHeaders;
    if (extra) for (const name in extra) headers[name] = extra[name]!;
    headers['authorization'] = req.authorization;
    headers['content-type'] = 'application/json';
    headers['accept'] = 'application/json';
    headers['user-agent'] = USER_AGENT;
    return this.upstream.request({
      origin,
      method: 'POST',
      path: `/api/1/vehicles/${req.vin}/signed_command`,
      headers,
      // Base64 needs no JSON escaping, so the envelope is built by concatenation.
      body: `{"routable_message":"${toBase64(bytes)}"}`,
      deadline: req.deadline,
      signal: req.signal,
    });
  }

  /** `{"response": "<base64 RoutableMessage>"}` → bytes, or undefined when malformed. */
  private answerBytes(res: UpstreamResponse): Uint8Array | undefined {
    const b64 = responseField(res.body);
    if (b64 === undefined) return undefined;
    try {
      return fromBase64(b64);
    } catch {
      return undefined;
    }
  }

  private backoffMs(attempt: number, deadline: number): number {
    const remaining = deadline - this.now();
    return Math.max(0, Math.min(50 * 2 ** (attempt - 1), Math.floor(remaining / 4)));
  }

  /** Cached session, or a fresh handshake for exactly this (VIN, domain). */
  private async obtainSession(req: SignedCommandRequest, origin: string): Promise<SessionOrOutcome> {
    // The memory store answers synchronously: not awaiting a plain value saves a suspension
    // of this async function per command (a store may still return a promise).
    const got = this.sessions.get(req.vin, req.domain);
    const cached = got instanceof Promise ? await got : got;
    if (cached) return { session: cached, origin };
    return this.handshake(req, origin);
  }

  private async handshake(req: SignedCommandRequest, origin0: string): Promise<SessionOrOutcome> {
    let origin = origin0;
    for (let attempt = 1; ; attempt++) {
      if (req.signal?.aborted) throw clientClosed();
      const built = buildSessionInfoRequest({ domain: req.domain, publicKey: this.key.publicKey, random: this.random });
      this.events?.handshake(req.domain, req);
      let res: UpstreamResponse;
      try {
        res = await this.post(origin, req, built.bytes);
      } catch (err) {
        // Not sent (client gone, budget spent, connect refused): report it as it is.
        if (err instanceof VcpError && !err.mayHaveSucceeded) throw err;
        const status = err instanceof VcpError ? err.status : 502;
        // A session info request has no side effects: whatever happened, nothing executed.
        throw new VcpError(
          err instanceof VcpError && err.code === 'upstream_timeout' ? 'upstream_timeout' : 'upstream_unavailable',
          'The vehicle did not answer the session handshake; no command was sent. Retry later.',
          { status: status === 504 ? 504 : 503, temporary: true, mayHaveSucceeded: false, cause: err },
        );
      }
      const cls = classifyStatus(res.status, 'signed_command');
      switch (cls) {
        case 'ok':
          break;
        case 'misdirected': {
          const next = this.router.reroute(req.route.subject, origin, res.headers, res.body);
          if (next && attempt < this.maxAttempts) {
            origin = next;
            continue;
          }
          return { outcome: { kind: 'relay', response: res } };
        }
        case 'unsupported_signed':
          this.unsupported.add(req.vin);
          return { outcome: { kind: 'unsupported' } };
        case 'may_have_executed':
          throw new VcpError('upstream_unavailable', `The service answered ${res.status} to the session handshake; no command was sent. Retry later.`, {
            status: 503,
            temporary: true,
          });
        default: // asleep (408), rate_limited, client_error: the service's answer, unchanged
          return { outcome: { kind: 'relay', response: res } };
      }
      const bytes = this.answerBytes(res);
      const answer = bytes ? openSessionInfoResponse(bytes, built) : ({ kind: 'ignored', reason: 'malformed' } as const);
      if (answer.kind === 'session_info') {
        let session: Session;
        try {
          session = Session.fromHandshake({
            key: this.key,
            vin: req.vin,
            domain: req.domain,
            challenge: built.uuid,
            sessionInfoBytes: answer.sessionInfoBytes,
            tag: answer.tag,
            now: this.now(),
          });
        } catch (err) {
          if (err instanceof VcpError && err.code === 'key_not_paired') throw this.keyNotPaired(req.domain);
          throw err;
        }
        await this.sessions.set(req.vin, req.domain, session);
        this.log.debug({ vin: req.vin, domain: domainName(req.domain) }, 'session established');
        return { session, origin };
      }
      if (answer.kind === 'fault') {
        const info = faultInfo(answer.fault);
        if (info.temporary && attempt < this.maxAttempts && this.now() < req.deadline) {
          await this.sleep(this.backoffMs(attempt, req.deadline), req.signal);
          continue;
        }
        throw this.faultToError(answer.fault);
      }
      throw new VcpError('bad_vehicle_response', 'The vehicle answered the session handshake with a message that does not authenticate; no command was sent. Retry.', {
        status: 502,
        temporary: true,
      });
    }
  }

  private async run(req: SignedCommandRequest): Promise<DispatchOutcome> {
    const got = await this.obtainSession(req, req.route.origin);
    if ('outcome' in got) return got.outcome;
    let { session, origin } = got;
    let rehandshakes = 0;

    for (let attempt = 1; ; attempt++) {
      if (req.signal?.aborted) throw clientClosed();
      const now = this.now();
      const remainingMs = req.deadline - now;
      if (remainingMs <= 0) {
        throw new VcpError('timeout', 'The request budget ran out before the command could be sent; it was not executed. Retry.', {
          status: 504,
          temporary: true,
        });
      }
      const expiresInSec = Math.min(this.maxExpiresInSec, Math.max(1, Math.ceil(remainingMs / 1000)));
      const signed: SignedCommand = session.signCommand(req.payload, { expiresInSec, now, random: this.random });
      // Persist the counter before anything leaves: a counter is never used twice.
      const stored = this.sessions.set(req.vin, req.domain, session);
      if (stored instanceof Promise) await stored;

      let res: UpstreamResponse;
      try {
        res = await this.post(origin, req, signed.bytes);
      } catch (err) {
        if (err instanceof VcpError && !err.mayHaveSucceeded) throw err; // not sent: safe to report as is
        const timeout = err instanceof VcpError && err.code === 'upstream_timeout';
        throw mayHaveExecuted(
          ambiguousStatus(timeout ? 'timeout' : 'connection_lost'),
          timeout ? 'The vehicle did not answer in time.' : 'The connection to the service failed after the command was sent.',
          err,
        );
      }

      const cls = classifyStatus(res.status, 'signed_command');
      switch (cls) {
        case 'ok':
          break;
        case 'misdirected': {
          // 421: the service did not route the command to a vehicle; resend (new counter).
          const next = this.router.reroute(req.route.subject, origin, res.headers, res.body);
          if (next && attempt < this.maxAttempts) {
            origin = next;
            continue;
          }
          return { kind: 'relay', response: res };
        }
        case 'unsupported_signed':
          this.unsupported.add(req.vin);
          return { kind: 'unsupported' };
        case 'may_have_executed':
          throw mayHaveExecuted(ambiguousStatus(res.status), `The service answered ${res.status} after receiving the command.`);
        case 'asleep':
          // A 408 after the command left: "offline or asleep" means the service never reached
          // the vehicle (relay it: the client should wake the car). Any other 408 ("vehicle
          // did not respond") means the vehicle may have received and executed it, so it must
          // not reach the client as a plain "vehicle unavailable". The reference makes the
          // same distinction on the service's text.
          if (!vehicleNotOnline(res.body)) throw mayHaveExecuted(504, 'The vehicle did not answer (the service timed out waiting for it).');
          return { kind: 'relay', response: res };
        default:
          return { kind: 'relay', response: res };
      }

      const bytes = this.answerBytes(res);
      const opened = bytes ? session.openResponse(bytes, signed.pending) : ({ kind: 'ignored', reason: 'malformed' } as const);
      if (opened.kind === 'ok') {
        const { result, reason } = interpretAnswer(req.domain as DomainId, opened.payload);
        return { kind: 'result', result, reason };
      }
      if (opened.kind === 'ignored') {
        this.log.warn({ vin: req.vin, reason: opened.reason }, 'vehicle answer did not authenticate');
        throw mayHaveExecuted(502, "The vehicle's answer could not be authenticated.");
      }

      // An authenticated (or plaintext) fault: the vehicle refused the message.
      const info = faultInfo(opened.fault);
      if (info.mayHaveSucceeded) throw this.faultToError(opened.fault);
      let adopted = false;
      if (opened.sessionInfo) {
        const r = session.adopt({ challenge: signed.uuid, ...opened.sessionInfo, now: this.now() });
        adopted = r.adopted;
        if (r.adopted) {
          this.events?.resync(req.domain, req);
          await this.sessions.set(req.vin, req.domain, session);
          this.log.info({ vin: req.vin, domain: domainName(req.domain), fault: info.name, epochChanged: r.epochChanged }, 'resynchronized session');
        } else if (r.reason === 'key_not_paired') {
          throw this.keyNotPaired(req.domain);
        }
      }
      const retriable = info.resync || info.temporary;
      if (!retriable || attempt >= this.maxAttempts || this.now() >= req.deadline) throw this.faultToError(opened.fault);
      if (info.resync && !adopted) {
        // Session info missing or unusable: start over with a fresh handshake (bounded).
        if (rehandshakes++ >= 1) throw this.faultToError(opened.fault);
        await this.sessions.delete(req.vin, req.domain);
        const again = await this.handshake(req, origin);
        if ('outcome' in again) return again.outcome;
        ({ session, origin } = again);
      }
      await this.sleep(this.backoffMs(attempt, req.deadline), req.signal);
    }
  }
}
