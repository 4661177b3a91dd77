/**
 * The proxy's HTTP surface (Hono): routes, authentication gate, input validation, the
 * error → envelope mapping, and relaying of upstream answers.
 *
 * Owns: what a client sees. Must not: hold protocol state (sessions, counters and VIN
 * ordering live in src/session/; upstream pools and routing in src/transport/).
 *
 * Security rules enforced here, before anything leaves the process:
 * - no bearer token → 401; bad VIN, unknown command, malformed body → 4xx;
 * - the upstream is chosen by the router, which only ever returns allowlisted hosts;
 * - errors never echo request bodies, tokens or signed payloads; unexpected exceptions
 *   become a bare 500 `internal_error` and the details go to the (redacting) log.
 */
import { Hono, type Context } from 'hono';
import { routePath } from 'hono/route';
import type { Logger } from 'pino';
import type { CommandKey } from '../crypto/types.js';
import type { ProxyConfig } from '../config.js';
import type { Plan } from '../commands/types.js';
import { VcpError } from '../protocol/errors.js';
import { silentLogger } from '../log.js';
import { signTelemetryConfig } from '../keys/jws.js';
import type { Upstream, UpstreamResponse } from '../transport/client.js';
import { UpstreamRouter, bearerToken, type Route } from '../transport/upstream.js';
import { headersFromFetch, appendForwardedFor, stripHopByHop } from '../transport/headers.js';
import type { AbortLike } from '../transport/abort.js';
import type { CommandDispatcher } from '../session/types.js';
import type { Metrics } from '../ops/metrics.js';
import type { Readiness } from '../ops/lifecycle.js';
import { metricsMiddleware } from '../ops/hono.js';
import { domainName } from '../protocol/domains.js';
import { readBody, parseJsonBody } from './body.js';
import { requestLog, requestRecord, trackDispatch, type RequestLogVariables, type RequestRecord } from './request-log.js';

/** What the app needs from the command catalogue (src/commands). */
export interface Catalogue {
  planCommand(name: string, body: unknown): { ok: true; plan: Plan } | { ok: false; error: VcpError };
  openApiDocument(): unknown;
}

export type AppConfig = Pick<ProxyConfig, 'upstream' | 'allowedUpstreams' | 'timeoutMs' | 'maxBodyBytes'>;

export interface ProxyAppDeps {
  config: AppConfig;
  key: CommandKey;
  catalogue: Catalogue;
  upstream: Upstream;
  router: UpstreamRouter;
  dispatcher: CommandDispatcher;
  logger?: Logger;
  now?: () => number;
  /** Prometheus metrics (src/ops); `/metrics` is served when given. */
  metrics?: Metrics | undefined;
  /** Readiness for `/ready` (src/ops). */
  readiness?: Readiness | undefined;
  /**
   * Serve `/metrics` on this app (default true when `metrics` is given). `false` when a
   * separate `--metrics-port` serves it: the API port then answers 404 on `/metrics`
   * (rather than forwarding it upstream as an unknown path).
   */
  serveMetrics?: boolean;
}

type Env = { Bindings: { incoming?: { socket?: { remoteAddress?: string } } }; Variables: RequestLogVariables };

/** 17 characters; alphanumeric so nothing path-like can reach the upstream URL. */
const VIN_RE = /^[A-Za-z0-9]{17}$/;
const RESULT_OK = JSON.stringify({ response: { result: true, reason: '' } });
const JSON_TYPE = 'application/json; charset=utf-8';

function jsonResponse(status: number, body: string, headers?: Record<string, string>): Response {
  return new Response(body, { status, headers: { 'content-type': JSON_TYPE, ...headers } });
}

export function errorResponse(err: VcpError): Response {
  return jsonResponse(err.status, JSON.stringify(err.toEnvelope()), err.headers);
}

/** Statuses whose answers carry no body (relayed without one by both serving paths). */
export const NULL_BODY: ReadonlySet<number> = new Set([101, 204, 205, 304]);

/** What the command core needs from one HTTP request, whatever carries it (Hono or node:http). */
export interface CommandInput {
  method: string;
  /** Path parameters as routed (not yet validated). */
  vin: string;
  name: string;
  /** One request header by lower-case name; repeated fields joined with ", " (Fetch semantics). */
  header(name: string): string | undefined;
  /** All request headers minus hop-by-hop ones (for REST forwarding). */
  forwardHeaders(): Record<string, string | string[]>;
  /** The request path with its query, forwarded as is on the REST fallback. */
  pathAndQuery: string;
  /** Reads the whole body; refuses more than `limit` bytes (before reading when declared). */
  readBody(limit: number): Promise<Uint8Array>;
  clientIp: string | undefined;
  /** Aborted when the client goes away: work not yet sent upstream is dropped. */
  signal: AbortLike;
  rec: RequestRecord | undefined;
}

/** A local answer (JSON text) or an upstream answer to relay (hop-by-hop headers stripped on the way out). */
export type CommandAnswer = { status: number; body: string; headers?: Record<string, string> | undefined } | { relay: UpstreamResponse };

export interface CommandCore {
  /** Runs one vehicle command (counts `commandDone`); throws VcpError or anything unexpected. */
  handleCommand(input: CommandInput): Promise<CommandAnswer>;
  /** Maps a thrown error to the client answer, sets the record's outcome, logs 5xx. */
  errorAnswer(err: unknown, rec: RequestRecord | undefined, route: string): CommandAnswer;
  log: Logger;
  metrics: Metrics | undefined;
}

export function errorAnswerOf(err: VcpError): CommandAnswer {
  return { status: err.status, body: JSON.stringify(err.toEnvelope()), headers: err.headers };
}

/** Headers of a local JSON answer. */
export function jsonHeaders(extra: Record<string, string> | undefined): Record<string, string> {
  return extra ? { 'content-type': JSON_TYPE, ...extra } : { 'content-type': JSON_TYPE };
}

function answerResponse(a: CommandAnswer): Response {
  return 'relay' in a ? relay(a.relay) : jsonResponse(a.status, a.body, a.headers);
}

/** Relays an upstream answer: status, headers (minus hop-by-hop), body bytes unchanged. */
export function relay(res: UpstreamResponse): Response {
  const h = new Headers();
  const clean = stripHopByHop(res.headers);
  for (const name in clean) {
    const v = clean[name]!;
    if (Array.isArray(v)) for (const item of v) h.append(name, item);
    else h.set(name, v);
  }
  return new Response(NULL_BODY.has(res.status) ? null : res.body, { status: res.status, headers: h });
}

/** The route pattern for logs (a raw path would put VINs and ids in every error line). */
function routeOf(c: Context): string {
  try {
    return routePath(c);
  } catch {
    return '*';
  }
}

function pathAndQuery(url: string): string {
  const i = url.indexOf('/', url.indexOf('//') + 2);
  return i < 0 ? '/' : url.slice(i);
}

export function createProxyHttp(deps: ProxyAppDeps): { app: Hono<Env>; core: CommandCore } {
  const { config, key, catalogue, upstream, router, dispatcher } = deps;
  const log = deps.logger ?? silentLogger();
  const now = deps.now ?? Date.now;
  const app = new Hono<Env>();
  const metrics = deps.metrics;
  // The access log first: it must see the final answer (after onError) of every request.
  app.use('*', requestLog(log));
  if (metrics) {
    app.use('*', metricsMiddleware(metrics));
    if (deps.serveMetrics !== false) app.get('/metrics', () => metrics.response());
  }
  if (deps.serveMetrics === false) {
    app.all('/metrics', () => errorResponse(new VcpError('not_found', 'Metrics are served on the separate --metrics-port.', { status: 404 })));
  }
  if (deps.readiness) {
    const readiness = deps.readiness;
    app.get('/ready', () => readiness.response());
  }

  app.onError((err, c) => answerResponse(errorAnswer(err, requestRecord(c), routeOf(c))));
  app.notFound(() => errorResponse(new VcpError('not_found', 'No such route.', { status: 404 })));

  // --- local endpoints (no token needed) ---
  app.get('/health', () => new Response('OK', { status: 200, headers: { 'content-type': 'text/plain; charset=utf-8' } }));
  app.get('/status', () => new Response('ok', { status: 200, headers: { 'content-type': 'text/plain; charset=utf-8' } }));
  // The catalogue is static: serialize its OpenAPI document once, on first use.
  let openApiText: string | undefined;
  const openApi = (): Response => jsonResponse(200, (openApiText ??= JSON.stringify(catalogue.openApiDocument())));
  app.get('/openapi.json', openApi);
  app.get('/api/1/commands', openApi);

  // --- helpers shared by the proxied routes ---
  interface Ctx {
    token: string;
    authorization: string;
    route: Route;
    deadline: number;
    clientIp: string | undefined;
  }

  function authenticateHeader(authorization: string | undefined): { token: string; authorization: string } {
    const token = bearerToken(authorization);
    if (!token || !authorization) {
      throw new VcpError('unauthorized', 'Missing bearer token: send "Authorization: Bearer <access token>". Nothing was forwarded.', {
        status: 401,
        headers: { 'www-authenticate': 'Bearer' },
      });
    }
    return { token, authorization };
  }

  function authenticate(c: Context<Env>): { token: string; authorization: string } {
    return authenticateHeader(c.req.header('authorization'));
  }

  /** Starts the budget and picks the upstream. */
  function beginWith(auth: { token: string; authorization: string }, clientIp: string | undefined): Ctx {
    const deadline = now() + config.timeoutMs;
    const { token, authorization } = auth;
    const route = router.resolve(token);
    return { token, authorization, route, deadline, clientIp };
  }

  function begin(c: Context<Env>, auth = authenticate(c)): Ctx {
    return beginWith(auth, c.env?.incoming?.socket?.remoteAddress);
  }

  /** Sends a request upstream, following one allowlisted 421 re-route, and relays the answer. */
  async function forward(
    signal: AbortLike,
    rec: RequestRecord | undefined,
    ctx: Ctx,
    req: { method: string; path: string; body: Uint8Array | undefined; headers: Record<string, string | string[]> },
  ): Promise<UpstreamResponse> {
    let origin = ctx.route.origin;
    for (let attempt = 0; ; attempt++) {
      const res = await upstream.request({
        origin,
        method: req.method,
        path: req.path,
        headers: req.headers,
        body: req.body,
        deadline: ctx.deadline,
        signal,
      });
      if (rec) rec.upstreamStatus = res.status;
      if (res.status === 421 && attempt === 0) {
        const next = router.reroute(ctx.route.subject, origin, res.headers, res.body);
        if (next) {
          log.info({ subject: ctx.route.subject, origin: next }, 'upstream answered 421; re-routing this token subject');
          origin = next;
          continue;
        }
      }
      return res;
    }
  }

  function withForwardedFor(h: Record<string, string | string[]>, clientIp: string | undefined): Record<string, string | string[]> {
    appendForwardedFor(h, clientIp);
    return h;
  }

  function clientHeaders(c: Context<Env>, ctx: Ctx): Record<string, string | string[]> {
    return withForwardedFor(headersFromFetch(c.req.raw.headers), ctx.clientIp);
  }

  async function forwardOriginal(c: Context<Env>, ctx: Ctx, body: Uint8Array | undefined): Promise<Response> {
    const method = c.req.method;
    const res = await forward(c.req.raw.signal, requestRecord(c), ctx, {
      method,
      path: pathAndQuery(c.req.url),
      body: method === 'GET' || method === 'HEAD' ? undefined : body,
      headers: clientHeaders(c, ctx),
    });
    return relay(res);
  }

  // --- vehicle commands: one transport-neutral core, used by the Hono route below and by
  // the node-level fast path (src/http/node.ts), so the command logic exists once ---
  app.all('/api/1/vehicles/:vin/command/:name', async (c) => {
    const raw = c.req.raw;
    const answer = await handleCommand({
      method: c.req.method,
      vin: c.req.param('vin') ?? '',
      name: c.req.param('name') ?? '',
      header: (n) => c.req.header(n),
      forwardHeaders: () => headersFromFetch(raw.headers),
      pathAndQuery: pathAndQuery(c.req.url),
      readBody: (limit) => readBody(raw, limit),
      clientIp: c.env?.incoming?.socket?.remoteAddress,
      signal: raw.signal,
      rec: requestRecord(c),
    });
    return answerResponse(answer);
  });

  async function handleCommand(input: CommandInput): Promise<CommandAnswer> {
    if (!metrics) return command(input);
    try {
      const res = await command(input);
      const status = 'relay' in res ? res.relay.status : res.status;
      metrics.commandDone(input.name, status < 300 ? 'ok' : `http_${status}`);
      return res;
    } catch (err) {
      metrics.commandDone(input.name, err instanceof VcpError ? err.code : 'internal_error');
      throw err;
    }
  }

  /** The REST fallback: the client's own request, forwarded as it came (plus X-Forwarded-For). */
  async function forwardCommandAsIs(input: CommandInput, ctx: Ctx, raw: Uint8Array): Promise<CommandAnswer> {
    const res = await forward(input.signal, input.rec, ctx, {
      method: input.method,
      path: input.pathAndQuery,
      body: raw,
      headers: withForwardedFor(input.forwardHeaders(), ctx.clientIp),
    });
    return { relay: res };
  }

  async function command(input: CommandInput): Promise<CommandAnswer> {
    if (input.method !== 'POST') {
      throw new VcpError('method_not_allowed', 'Vehicle commands use POST.', { status: 405, headers: { allow: 'POST' } });
    }
    const auth = authenticateHeader(input.header('authorization'));
    const { vin, name, rec, signal } = input;
    if (!VIN_RE.test(vin)) {
      throw new VcpError('not_found', 'Expected a 17-character VIN in the command path (the proxy cannot use the numeric vehicle id).', {
        status: 404,
      });
    }
    const raw = await input.readBody(config.maxBodyBytes);
    const planned = catalogue.planCommand(name, parseJsonBody(raw));
    if (!planned.ok) throw planned.error;
    const ctx = beginWith(auth, input.clientIp);
    const plan = planned.plan;


    if (plan.kind === 'rest') {
      metrics?.restFallback(name);
      if (rec) rec.restFallback = true;
      return forwardCommandAsIs(input, ctx, raw);
    }
    if (rec && plan.kind === 'signed') rec.domain = domainName(plan.domain);
    if (plan.kind === 'wake') {
      const headers = withForwardedFor(input.forwardHeaders(), ctx.clientIp);
      // The service wants JSON on every authenticated POST, even without a body.
      headers['content-type'] = 'application/json';
      const res = await forward(signal, rec, ctx, { method: 'POST', path: `/api/1/vehicles/${vin}/wake_up`, body: undefined, headers });
      return res.status >= 200 && res.status < 300 ? { status: 200, body: RESULT_OK } : { relay: res };
    }
    if (dispatcher.isUnsupported(vin)) {
      metrics?.restFallback(name);
      if (rec) rec.restFallback = true;
      return forwardCommandAsIs(input, ctx, raw);
    }
    const fwd: Record<string, string> = {};
    const prior = input.header('x-forwarded-for');
    if (prior) fwd['x-forwarded-for'] = prior;
    appendForwardedFor(fwd, ctx.clientIp);
    const dispatchRequest = {
      vin,
      name,
      domain: plan.domain,
      payload: plan.payload,
      authorization: ctx.authorization,
      route: ctx.route,
      deadline: ctx.deadline,
      signal,
      forwardHeaders: fwd,
    };
    trackDispatch(dispatchRequest, rec);
    const outcome = await dispatcher.execute(dispatchRequest);
    if (rec) {
      if (outcome.kind === 'result') {
        rec.upstreamStatus = 200;
        rec.outcome = outcome.result ? 'ok' : 'vehicle_reason';
      } else if (outcome.kind === 'relay') {
        rec.upstreamStatus = outcome.response.status;
        rec.outcome = outcome.response.status < 300 ? 'ok' : `upstream_${outcome.response.status}`;
      } else {
        rec.restFallback = true;
      }
    }
    switch (outcome.kind) {
      case 'result':
        return outcome.result && outcome.reason === ''
          ? { status: 200, body: RESULT_OK }
          : { status: 200, body: JSON.stringify({ response: { result: outcome.result, reason: outcome.reason } }) };
      case 'unsupported':
        log.info({ vin }, 'vehicle does not support signed commands; forwarding to REST');
        metrics?.restFallback(name);
        return forwardCommandAsIs(input, ctx, raw);
      case 'relay':
        return { relay: outcome.response };
    }
  }

  // --- telemetry configuration: sign the config as a JWS and forward to the _jws endpoint ---
  app.post('/api/1/vehicles/fleet_telemetry_config', async (c) => {
    const auth = authenticate(c);
    const raw = await readBody(c.req.raw, config.maxBodyBytes);
    if (raw.byteLength === 0) {
      throw new VcpError('invalid_request', 'Send a JSON body {"vins": [...], "config": {...}}.', { status: 400 });
    }
    const body = parseJsonBody(raw);
    const messages: Record<string, string[]> = {};
    const obj = body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined;
    const vins = obj?.['vins'];
    const cfg = obj?.['config'];
    if (!Array.isArray(vins) || vins.length === 0 || !vins.every((v) => typeof v === 'string' && v !== '')) {
      messages['vins'] = ['must be a non-empty array of VIN strings'];
    }
    if (cfg === null || typeof cfg !== 'object' || Array.isArray(cfg)) {
      messages['config'] = ['must be a JSON object (the telemetry configuration to sign)'];
    }
    if (!obj || Object.keys(messages).length) {
      throw new VcpError('invalid_request', 'Malformed telemetry configuration request; see messages.', { status: 400, messages });
    }
    const ctx = begin(c, auth);
    const token = signTelemetryConfig(key, cfg as object);
    const headers = clientHeaders(c, ctx);
    headers['content-type'] = 'application/json';
    const res = await forward(c.req.raw.signal, requestRecord(c), ctx, {
      method: 'POST',
      path: '/api/1/vehicles/fleet_telemetry_config_jws',
      body: Buffer.from(JSON.stringify({ vins, token })),
      headers,
    });
    return relay(res);
  });

  // --- everything else: transparent pass-through ---
  app.all('*', async (c) => {
    const ctx = begin(c);
    const m = c.req.method;
    const body = m === 'GET' || m === 'HEAD' ? undefined : await readBody(c.req.raw, config.maxBodyBytes);
    return forwardOriginal(c, ctx, body);
  });

  /** The error → envelope mapping (Hono's onError and the fast path). */
  function errorAnswer(err: unknown, rec: RequestRecord | undefined, route: string): CommandAnswer {
    if (rec) rec.outcome = err instanceof VcpError ? err.code : 'internal_error';
    if (err instanceof VcpError) {
      if (err.status >= 500) log.warn({ reqId: rec?.requestId, code: err.code, status: err.status, route }, err.message);
      return errorAnswerOf(err);
    }
    log.error({ reqId: rec?.requestId, err, route }, 'unexpected error');
    return errorAnswerOf(new VcpError('internal_error', 'Internal proxy error; see the proxy log.', { status: 500 }));
  }

  return { app, core: { handleCommand, errorAnswer, log, metrics } };
}

/** The Hono app alone (tests with `app.request`). */
export function createProxyApp(deps: ProxyAppDeps): Hono<Env> {
  return createProxyHttp(deps).app;
}
