/**
 * One structured log line per request (the access log), and the request id.
 *
 * The line carries only fields built here from known-safe values: request id, method, the
 * route PATTERN (never the raw path with its query string), VIN and command name (both
 * validated shapes), signing domain, a stable outcome code, statuses, handshake/resync
 * counts and latency. Headers, tokens and bodies are never put into it, so redaction in
 * src/log.ts is a second net, not the first.
 *
 * Handshake and resync counts come from the dispatcher's event hooks, which receive the
 * `SignedCommandRequest` object: the app registers that object here (`trackDispatch`) and
 * the hooks find the request's record through a WeakMap — no async context propagation
 * and nothing left behind once the request is garbage.
 */
import { randomUUID } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';
import type { Logger } from 'pino';

/** What one request accumulates for its log line. */
export interface RequestRecord {
  requestId: string;
  vin?: string;
  command?: string;
  domain?: string;
  /** `ok`, a VcpError code, `vehicle_reason`, `upstream_<status>` or `rest_fallback`. */
  outcome?: string;
  upstreamStatus?: number;
  handshakes: number;
  resyncs: number;
  restFallback?: boolean;
}

/** A client's X-Request-Id is honoured only when it is short and plain (log-safe). */
const REQUEST_ID_RE = /^[A-Za-z0-9._:@/+=-]{1,128}$/;
const VEHICLE_PATH = /^\/api\/1\/vehicles\/([A-Za-z0-9]{17})(?:\/command\/([a-z0-9_]{1,64}))?(?:\/|$)/;
const records = new WeakMap<object, RequestRecord>();

export const REQUEST_RECORD = 'requestRecord';
export type RequestLogVariables = { requestRecord: RequestRecord };

export function requestRecord(c: Context): RequestRecord | undefined {
  return c.get(REQUEST_RECORD) as RequestRecord | undefined;
}

/** Links a dispatcher request object to the HTTP request's record. */
export function trackDispatch(dispatchRequest: object, rec: RequestRecord | undefined): void {
  if (rec) records.set(dispatchRequest, rec);
}

/** Dispatcher event hooks (wired in buildProxy): count per request. */
export function noteHandshake(dispatchRequest: object | undefined): void {
  const rec = dispatchRequest && records.get(dispatchRequest);
  if (rec) rec.handshakes++;
}
export function noteResync(dispatchRequest: object | undefined): void {
  const rec = dispatchRequest && records.get(dispatchRequest);
  if (rec) rec.resyncs++;
}

export interface RequestLogOptions {
  /** Monotonic clock in ms (tests may inject). Default `performance.now`. */
  clock?: () => number;
}

/**
 * Mount first (before metrics and routes): sets `X-Request-Id` on every answer, including
 * error answers, and writes exactly one `request` line when the answer is ready.
 */
/** A fresh record for one request: honours a plain client X-Request-Id, else a UUID. */
export function startRecord(givenRequestId: string | undefined, path: string): RequestRecord {
  const rec: RequestRecord = {
    requestId: givenRequestId !== undefined && REQUEST_ID_RE.test(givenRequestId) ? givenRequestId : randomUUID(),
    handshakes: 0,
    resyncs: 0,
  };
  const m = VEHICLE_PATH.exec(path);
  if (m) {
    rec.vin = m[1];
    if (m[2]) rec.command = m[2];
  }
  return rec;
}

/**
 * Writes the one `request` line for a finished request. Shared by the Hono middleware and
 * the node-level command fast path (src/http/node.ts) so both log the same fields.
 */
export function writeAccessLine(log: Logger, rec: RequestRecord, method: string, route: string, status: number, latencyMs: number): void {
  // Not set by a handler: a local answer (ok/http_<status>) or an upstream answer relayed.
  const outcome = rec.outcome ?? (status < 400 ? 'ok' : rec.upstreamStatus === status ? `upstream_${status}` : `http_${status}`);
  // pino's silent level is a no-op; skip building the line at all then (hot path).
  if (!log.isLevelEnabled('info')) return;
  log.info(
    {
      reqId: rec.requestId,
      method,
      route,
      status,
      ...(rec.vin ? { vin: rec.vin } : {}),
      ...(rec.command ? { command: rec.command } : {}),
      ...(rec.domain ? { domain: rec.domain } : {}),
      outcome,
      ...(rec.upstreamStatus !== undefined ? { upstreamStatus: rec.upstreamStatus } : {}),
      ...(rec.restFallback ? { restFallback: true } : {}),
      handshakes: rec.handshakes,
      resyncs: rec.resyncs,
      latencyMs: Math.round(latencyMs * 10) / 10,
    },
    'request',
  );
}

/**
 * Mount first (before metrics and routes): sets `X-Request-Id` on every answer, including
 * error answers, and writes exactly one `request` line when the answer is ready.
 */
export function requestLog(log: Logger, opts: RequestLogOptions = {}): MiddlewareHandler {
  const clock = opts.clock ?? (() => performance.now());
  return async (c, next) => {
    const start = clock();
    const rec = startRecord(c.req.header('x-request-id'), c.req.path);
    c.set(REQUEST_RECORD, rec);
    try {
      await next();
    } finally {
      const status = c.res.status;
      c.res.headers.set('x-request-id', rec.requestId);
      let route: string;
      try {
        route = routePath(c);
      } catch {
        route = '*';
      }
      writeAccessLine(log, rec, c.req.method, route, status, clock() - start);
    }
  };
}
