/**
 * The node:http request listener of the proxy: `POST /api/1/vehicles/{vin}/command/{name}`
 * is answered here directly on IncomingMessage/ServerResponse; every other request goes to
 * the Hono app (`getRequestListener(app.fetch)`).
 *
 * Why: on @hono/node-server each request becomes a WHATWG Request (Headers, URL, signal) and
 * each answer a Response that is translated back — most of the framework's per-call cost,
 * paid on the one route that carries the fleet's traffic. The command LOGIC is not here: it
 * is the transport-neutral core in app.ts (`CommandCore.handleCommand`), shared with the
 * Hono route, so `app.request` tests and real sockets run the same code. This file only
 * does what Hono's middlewares do for that route: access log + X-Request-Id, in-flight and
 * 429 metrics, error → envelope mapping, bounded body reading, abort on client disconnect.
 *
 * Only the plain shape is taken (POST, no query string, no percent-encoding, no trailing
 * slash); anything unusual falls through to Hono, which decodes and routes it as before.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { stripHopByHop } from '../transport/headers.js';
import { AbortSource, type AbortLike } from '../transport/abort.js';
import type { CommandAnswer, CommandCore, CommandInput } from './app.js';
import { jsonHeaders, NULL_BODY } from './app.js';
import { bodyTooLarge } from './body.js';
import { startRecord, writeAccessLine, type RequestRecord } from './request-log.js';

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

const COMMAND_PATH = /^\/api\/1\/vehicles\/([^/?%]+)\/command\/([^/?%]+)$/;
const ROUTE = '/api/1/vehicles/:vin/command/:name';
const EMPTY = new Uint8Array(0);

/**
 * One header from `rawHeaders`, repeated fields joined with ", " — the Fetch `Headers`
 * semantics the Hono route sees (node's `req.headers` would keep only the first
 * Authorization, so the two paths could disagree on a doubled header).
 */
export function rawHeader(raw: string[], name: string): string | undefined {
  let out: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const k = raw[i]!;
    if (k.length === name.length && k.toLowerCase() === name) out = out === undefined ? raw[i + 1]! : `${out}, ${raw[i + 1]!}`;
  }
  return out;
}

/** All headers minus hop-by-hop ones (and those named in Connection), Fetch-joined. */
function forwardHeaders(raw: string[]): Record<string, string | string[]> {
  const joined: Record<string, string> = {};
  for (let i = 0; i < raw.length; i += 2) {
    const k = raw[i]!.toLowerCase();
    const prev = joined[k];
    joined[k] = prev === undefined ? raw[i + 1]! : `${prev}, ${raw[i + 1]!}`;
  }
  return stripHopByHop(joined);
}

interface BodyState {
  chunks: Buffer[];
  size: number;
  limit: number;
  resolve(b: Uint8Array): void;
  reject(e: unknown): void;
}
const BODY = Symbol('vcp.body');
type Req = IncomingMessage & { [BODY]?: BodyState | undefined };

// Module-level listeners with their state on the request (`this` is the emitter): no
// closures per request (each one is an allocation, and more under tsx's keepNames).
function bodyDone(req: Req): BodyState | undefined {
  const st = req[BODY];
  req[BODY] = undefined;
  req.off('data', onBodyData);
  req.off('end', onBodyEnd);
  req.off('error', onBodyError);
  req.off('close', onBodyClose);
  return st;
}
function onBodyData(this: Req, chunk: Buffer): void {
  const st = this[BODY];
  if (!st) return;
  st.size += chunk.byteLength;
  if (st.size > st.limit) {
    bodyDone(this);
    this.pause();
    st.reject(bodyTooLarge(st.limit));
    return;
  }
  st.chunks.push(chunk);
}
function onBodyEnd(this: Req): void {
  const st = bodyDone(this);
  if (!st) return;
  const { chunks, size } = st;
  st.resolve(chunks.length === 0 ? EMPTY : chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
}
function onBodyError(this: Req, e: Error): void {
  bodyDone(this)?.reject(e);
}
function onBodyClose(this: Req): void {
  // 'close' before 'end': the client went away mid-body.
  bodyDone(this)?.reject(new Error('client closed the connection before the request body was complete'));
}

/**
 * Reads the body with the limit enforced twice: a declared Content-Length over the limit
 * is refused before a byte is read; otherwise bytes are counted as they arrive (chunked or a
 * lying length cannot exceed it), and reading stops at the first byte over.
 */
function readNodeBody(req: Req, limit: number): Promise<Uint8Array> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) return Promise.reject(bodyTooLarge(limit));
  if (declared === '0') return Promise.resolve(EMPTY);
  return new Promise<Uint8Array>((resolve, reject) => {
    req[BODY] = { chunks: [], size: 0, limit, resolve, reject };
    req.on('data', onBodyData);
    req.on('end', onBodyEnd);
    req.on('error', onBodyError);
    req.on('close', onBodyClose);
  });
}

/** The core's view of one node request (methods, not per-request closures). */
class NodeCommandInput implements CommandInput {
  readonly method = 'POST';
  readonly clientIp: string | undefined;
  constructor(
    private readonly req: IncomingMessage,
    readonly vin: string,
    readonly name: string,
    readonly pathAndQuery: string,
    readonly signal: AbortLike,
    readonly rec: RequestRecord,
  ) {
    this.clientIp = req.socket.remoteAddress;
  }
  header(name: string): string | undefined {
    return rawHeader(this.req.rawHeaders, name);
  }
  forwardHeaders(): Record<string, string | string[]> {
    return forwardHeaders(this.req.rawHeaders);
  }
  readBody(limit: number): Promise<Uint8Array> {
    return readNodeBody(this.req, limit);
  }
}

const ABORT = Symbol('vcp.abort');
type Res = ServerResponse & { [ABORT]?: AbortSource };
/** The client went away before the answer was written: abort work not yet sent upstream. */
function onResClose(this: Res): void {
  if (!this.writableFinished) this[ABORT]?.abort();
}

function send(res: ServerResponse, answer: CommandAnswer, requestId: string, closeAfter: boolean): number {
  if (res.headersSent || res.destroyed) return 'relay' in answer ? answer.relay.status : answer.status;
  if ('relay' in answer) {
    const up = answer.relay;
    const headers = stripHopByHop(up.headers);
    headers['x-request-id'] = requestId;
    if (closeAfter) headers['connection'] = 'close';
    if (NULL_BODY.has(up.status)) {
      res.writeHead(up.status, headers);
      res.end();
    } else {
      headers['content-length'] = String(up.body.length);
      res.writeHead(up.status, headers);
      res.end(up.body);
    }
    return up.status;
  }
  const headers = jsonHeaders(answer.headers);
  headers['x-request-id'] = requestId;
  if (closeAfter) headers['connection'] = 'close';
  // A declared length: without it node frames the answer as chunked (size line, data,
  // terminator), more bytes and more work for every client, and for us.
  headers['content-length'] = String(Buffer.byteLength(answer.body));
  res.writeHead(answer.status, headers);
  res.end(answer.body);
  return answer.status;
}

/** The proxy's request listener: the command fast path, then Hono for everything else. */
export function proxyRequestListener(core: CommandCore, fallback: Listener, clock: () => number = () => performance.now()): Listener {
  const { log, metrics } = core;
  return (req, res) => {
    const url = req.url;
    const m = req.method === 'POST' && url !== undefined ? COMMAND_PATH.exec(url) : null;
    if (!m) {
      fallback(req, res);
      return;
    }
    serveCommand(req, res, url!, m[1]!, m[2]!).catch((err: unknown) => {
      // Only reachable if logging or the socket itself throws; never leave a request hanging.
      log.error({ err, route: ROUTE }, 'unexpected error on the command fast path');
      res.destroy();
    });
  };

  async function serveCommand(req: IncomingMessage, res: ServerResponse, url: string, vin: string, name: string): Promise<void> {
    const start = clock();
    const rec = startRecord(rawHeader(req.rawHeaders, 'x-request-id'), url);
    const ac = new AbortSource();
    (res as Res)[ABORT] = ac;
    res.once('close', onResClose);
    metrics?.inflight.inc();
    let answer: CommandAnswer;
    try {
      answer = await core.handleCommand(new NodeCommandInput(req, vin, name, url, ac, rec));
    } catch (err) {
      answer = core.errorAnswer(err, rec, ROUTE);
    }
    let status: number;
    try {
      // A refused over-limit body is not read to its end (node would not skip a partly read
      // one, and draining a huge one is what the limit prevents): close the connection after
      // this answer instead of keeping it alive.
      const refused = !('relay' in answer) && answer.status === 413 && !req.complete;
      status = send(res, answer, rec.requestId, refused);
    } catch (err) {
      status = 500;
      log.error({ reqId: rec.requestId, err, route: ROUTE }, 'unexpected error writing the answer');
      res.destroy();
    } finally {
      metrics?.inflight.dec();
    }
    if (status === 429) metrics?.rateLimited();
    writeAccessLine(log, rec, 'POST', ROUTE, status, clock() - start);
  }
}
