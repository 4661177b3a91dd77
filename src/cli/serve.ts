/**
 * `vcproxy serve`: the signing proxy. This file wires configuration, the command key, the
 * upstream pools, the session layer and the Hono app together and binds the listener.
 * Business logic lives below (src/http, src/session, src/transport); here we only decide
 * start-up order and turn every start-up failure into ONE clear line and a non-zero exit.
 *
 * Server timeouts are set explicitly (Node's defaults let a slow client hold a socket for
 * minutes): headers must arrive within `headersTimeout`, the whole request within
 * `requestTimeout`, and idle keep-alive sockets close after `keepAliveTimeout`.
 */
import { readFileSync } from 'node:fs';
import { createPrivateKey, createPublicKey } from 'node:crypto';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { createServer as createHttpServer, type Server } from 'node:http';
import type { Hono } from 'hono';
import type { Logger } from 'pino';
import { ConfigError, HELP_REQUESTED, configUsage, formatConfig, parseConfig, type ProxyConfig } from '../config.js';
import { createLogger, silentLogger } from '../log.js';
import { VcpError } from '../protocol/errors.js';
import { loadKeyFile, publicKeyToPem, type LoadKeyOptions } from '../keys/index.js';
import type { CommandKey } from '../crypto/types.js';
import { planCommand, openApiDocument } from '../commands/index.js';
import { UpstreamClient, type Upstream } from '../transport/client.js';
import { UpstreamRouter } from '../transport/upstream.js';
import type { AbortLike } from '../transport/abort.js';
import { SessionDispatcher } from '../session/dispatcher.js';
import { MemorySessionStore, type SessionStore } from '../session/store.js';
import { MemoryVinQueue, type VinQueue } from '../session/queue.js';
import type { Session } from '../crypto/session.js';
import { createProxyHttp, type Catalogue, type CommandCore } from '../http/app.js';
import { proxyRequestListener } from '../http/node.js';
import { noteHandshake, noteResync } from '../http/request-log.js';
import { createOpsServer } from '../ops/server.js';
import { createMetrics, type Metrics } from '../ops/metrics.js';
import { Readiness, gracefulShutdown, probeUpstream } from '../ops/lifecycle.js';
import { instrumentUpstream } from '../ops/upstream.js';
import { COMMANDS } from '../commands/index.js';

export class StartupError extends Error {
  override readonly name = 'StartupError';
}

export interface ProxyParts {
  app: Hono<never>;
  /** The transport-neutral command core the app's command route and the node fast path share. */
  core: CommandCore;
  metrics: Metrics | undefined;
  readiness: Readiness;
  dispatcher: SessionDispatcher;
  router: UpstreamRouter;
  upstream: Upstream;
  close(): Promise<void>;
}

export interface BuildOptions {
  logger?: Logger;
  /** Replace the upstream client (tests count or fake requests here). */
  upstream?: Upstream;
  sessions?: SessionStore<Session>;
  queue?: VinQueue;
  catalogue?: Catalogue;
  now?: () => number;
  /** Backoff sleep of the dispatcher (tests pass a no-op). */
  sleep?: (ms: number, signal?: AbortLike) => Promise<void>;
  /** Prometheus metrics; `null` turns them off (the default creates a registry). */
  metrics?: Metrics | null;
  readiness?: Readiness;
}

/** The real command catalogue, adapted to what the app needs. */
export const CATALOGUE: Catalogue = {
  planCommand: (name, body) => planCommand(name, body),
  openApiDocument: () => openApiDocument(),
};

/** Builds the in-process proxy (no listener): for `app.request` tests and for `startProxy`. */
export function buildProxy(config: ProxyConfig, key: CommandKey, opts: BuildOptions = {}): ProxyParts {
  const logger = opts.logger ?? silentLogger();
  const metrics =
    opts.metrics === null ? undefined : (opts.metrics ?? createMetrics({ commandNames: COMMANDS.map((c) => c.name), processMetrics: true }));
  const readiness = opts.readiness ?? new Readiness();
  readiness.set('keyLoaded', true);
  const rawUpstream =
    opts.upstream ??
    new UpstreamClient({ connections: config.upstreamConnections, maxResponseBytes: config.maxResponseBytes, ...(opts.now ? { now: opts.now } : {}) });
  const upstream = metrics ? instrumentUpstream(rawUpstream, metrics) : rawUpstream;
  const sessions = opts.sessions ?? new MemorySessionStore<Session>(config.sessionCacheSize);
  if (metrics && sessions instanceof MemorySessionStore) metrics.setSessionCacheSizeSource(() => sessions.size);
  const router = new UpstreamRouter({ fixed: config.upstream, allowed: config.allowedUpstreams });
  const dispatcher = new SessionDispatcher({
    key,
    upstream,
    router,
    sessions,
    queue: opts.queue ?? new MemoryVinQueue(config.vinQueueLimit),
    logger,
    pairingUrl: config.pairingUrl,
    developerDomain: config.developerDomain,
    ...(opts.now ? { now: opts.now } : {}),
    ...(opts.sleep ? { sleep: opts.sleep } : {}),
    events: {
      handshake: (d, req) => {
        metrics?.handshake(d);
        noteHandshake(req);
      },
      resync: (d, req) => {
        metrics?.resync(d);
        noteResync(req);
      },
    },
  });
  const { app, core } = createProxyHttp({
    config,
    key,
    catalogue: opts.catalogue ?? CATALOGUE,
    upstream,
    router,
    dispatcher,
    logger,
    metrics,
    readiness,
    // With --metrics-port, /metrics lives only on the separate ops listener.
    serveMetrics: config.metricsPort === undefined,
    ...(opts.now ? { now: opts.now } : {}),
  });
  return { app: app as unknown as Hono<never>, core, metrics, readiness, dispatcher, router, upstream, close: () => upstream.close() };
}

export interface RunningProxy {
  url: string;
  /** `http://host:port` of the separate metrics listener (`--metrics-port`), if any. */
  metricsUrl: string | undefined;
  server: Server;
  /** The `--metrics-port` listener, if any. */
  opsServer: Server | undefined;
  parts: ProxyParts;
  close(): Promise<void>;
}

export interface StartOptions extends BuildOptions {
  keyOptions?: LoadKeyOptions;
  /** Probe `{upstream}/status` at start-up for /ready (default true; tests that count requests turn it off). */
  probe?: boolean;
  /**
   * Slow-client limits (tests shorten them): headers must arrive within `headersMs`, the
   * whole request within `requestMs`; Node checks both every `checkIntervalMs`.
   */
  serverTimeouts?: { headersMs?: number; requestMs?: number; checkIntervalMs?: number };
}

function readPem(flag: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? 'error';
    throw new StartupError(`cannot read ${flag} ${path} (${code}); check the path and its permissions`);
  }
}

function spkiOf(pem: Buffer, flag: string, path: string): Buffer {
  try {
    return createPublicKey(createPrivateKey(pem)).export({ type: 'spki', format: 'der' });
  } catch {
    throw new StartupError(`${flag} ${path} is not a usable PEM private key`);
  }
}

/** Loads key and certificates, binds the listener, resolves once listening. */
export async function startProxy(config: ProxyConfig, opts: StartOptions = {}): Promise<RunningProxy> {
  let key: CommandKey;
  try {
    key = loadKeyFile(config.keyFile, {
      ...(config.allowInsecureKeyPermissions ? { allowInsecurePermissions: true } : {}),
      ...opts.keyOptions,
    });
  } catch (e) {
    throw new StartupError(e instanceof Error ? e.message : String(e));
  }

  let tls: { cert: Buffer; key: Buffer } | undefined;
  if (config.tlsCert && config.tlsKey) {
    const cert = readPem('--tls-cert', config.tlsCert);
    const tlsKey = readPem('--tls-key', config.tlsKey);
    // Reusing the command key for TLS would expose it to every TLS peer's scrutiny and to
    // any TLS-layer bug; the command key must only ever sign commands.
    const commandSpki = createPublicKey(publicKeyToPem(key.publicKey)).export({ type: 'spki', format: 'der' });
    if (spkiOf(tlsKey, '--tls-key', config.tlsKey).equals(commandSpki)) {
      throw new StartupError('--tls-key is the command key; use a separate key for TLS so the command key only signs commands');
    }
    tls = { cert, key: tlsKey };
  }

  const log = opts.logger ?? silentLogger();
  const parts = buildProxy(config, key, { ...opts, logger: log });
  const fetch = parts.app.fetch as (req: Request, env: unknown) => Response | Promise<Response>;
  const st = opts.serverTimeouts ?? {};
  // Node enforces headersTimeout/requestTimeout on a timer whose period is fixed when the
  // server is created (connectionsCheckingInterval, Node's default 30 s, which would let a
  // slowloris client hold a socket for up to 40 s despite the 10 s header limit): 1 s.
  const checking = { connectionsCheckingInterval: st.checkIntervalMs ?? 1_000 };
  // Vehicle commands are served on node's request/response objects directly (src/http/node.ts:
  // the WHATWG Request/Response translation was most of Hono's per-call cost); the rest is Hono.
  const listener = proxyRequestListener(parts.core, getRequestListener(fetch));
  const server: Server = tls
    ? createHttpsServer({ cert: tls.cert, key: tls.key, minVersion: 'TLSv1.2', ...checking }, listener)
    : createHttpServer(checking, listener);
  server.headersTimeout = st.headersMs ?? 10_000;
  server.requestTimeout = st.requestMs ?? Math.max(30_000, config.timeoutMs + 10_000);
  server.keepAliveTimeout = 30_000;

  try {
    await new Promise<void>((resolve, reject) => {
      const onError = (e: NodeJS.ErrnoException): void => reject(e);
      server.once('error', onError);
      server.listen(config.port, config.host, () => {
        server.off('error', onError);
        resolve();
      });
    });
  } catch (e) {
    await parts.close();
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new StartupError(`port ${config.port} on ${config.host} is already in use; stop the other process or pick another --port`);
    if (code === 'EACCES') throw new StartupError(`not allowed to listen on ${config.host}:${config.port}; use a port above 1023 or run with the needed privilege`);
    if (code === 'EADDRNOTAVAIL') throw new StartupError(`address ${config.host} is not available on this machine; check --host`);
    throw new StartupError(`cannot listen on ${config.host}:${config.port}: ${(e as Error).message}`);
  }

  let opsServer: Server | undefined;
  let metricsUrl: string | undefined;
  if (config.metricsPort !== undefined && parts.metrics) {
    // Plain HTTP on purpose: it carries no secrets, and scrapers/probes rarely do TLS.
    const ops = createOpsServer({ metrics: parts.metrics, readiness: parts.readiness });
    try {
      await new Promise<void>((resolve, reject) => {
        ops.once('error', reject);
        ops.listen(config.metricsPort, config.host, () => {
          ops.off('error', reject);
          resolve();
        });
      });
    } catch (e) {
      await new Promise<void>((r) => server.close(() => r()));
      await parts.close();
      const code = (e as NodeJS.ErrnoException).code;
      throw new StartupError(
        code === 'EADDRINUSE'
          ? `--metrics-port ${config.metricsPort} on ${config.host} is already in use; pick another port`
          : `cannot listen on --metrics-port ${config.metricsPort}: ${(e as Error).message}`,
      );
    }
    opsServer = ops;
    const a = ops.address() as AddressInfo;
    metricsUrl = `http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}`;
  }

  parts.readiness.set('listening', true);
  if (config.upstream && opts.probe !== false) {
    // Any HTTP answer means reachable; a failed probe only shows in /ready, it is not fatal.
    void probeUpstream(`${config.upstream}/status`).then((p) => {
      parts.readiness.set('upstreamReachable', p.reachable);
      if (!p.reachable) log.warn({ upstream: config.upstream }, 'upstream not reachable at start-up; /ready answers 503 until it is');
    });
  } else {
    parts.readiness.set('upstreamReachable', true);
  }
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  const url = `${tls ? 'https' : 'http'}://${host}:${addr.port}`;
  let closing: Promise<void> | undefined;
  return {
    url,
    metricsUrl,
    server,
    opsServer,
    parts,
    close: () =>
      (closing ??= (async () => {
        await Promise.all([
          new Promise<void>((resolve) => {
            server.close(() => resolve());
            server.closeIdleConnections?.();
          }),
          opsServer &&
            new Promise<void>((resolve) => {
              opsServer.close(() => resolve());
              opsServer.closeAllConnections();
            }),
        ]);
        await parts.close();
      })()),
  };
}

export async function run(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  let config: ProxyConfig;
  try {
    const parsed = parseConfig(args, env);
    if (parsed === HELP_REQUESTED) {
      process.stdout.write(configUsage() + '\n');
      return 0;
    }
    config = parsed;
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`vcproxy serve: ${e.message}\n`);
      return 2;
    }
    throw e;
  }
  if (config.printConfig) {
    process.stdout.write(formatConfig(config) + '\n');
    return 0;
  }
  const logger = createLogger({ level: config.logLevel });
  if (!config.tlsCert && config.allowInsecureHttp) {
    logger.warn('serving plain HTTP on a non-loopback address (--allow-insecure-http): bearer tokens cross the network unencrypted');
  }
  let running: RunningProxy;
  try {
    running = await startProxy(config, { logger });
  } catch (e) {
    const msg = e instanceof StartupError || e instanceof VcpError ? e.message : `unexpected start-up failure: ${(e as Error).message}`;
    process.stderr.write(`vcproxy serve: ${msg}\n`);
    return 1;
  }
  // SIGTERM/SIGINT: stop accepting, let in-flight commands finish (their outcome matters),
  // then close the upstream pools.
  const shutdown = gracefulShutdown(running.server, {
    graceMs: config.shutdownGraceMs,
    readiness: running.parts.readiness,
    logger,
    // Closes the upstream pools and the --metrics-port listener once the API has drained.
    onClosed: () => running.close(),
  });
  // Announced only now that the signal handlers are in place: a supervisor (or test) that
  // signals as soon as it sees this line must get a graceful drain, not the default
  // kill-on-signal that applies while no handler is registered.
  logger.info(
    { url: running.url, ...(running.metricsUrl ? { metricsUrl: running.metricsUrl } : {}), upstream: config.upstream ?? `token audience within ${config.allowedUpstreams.join(',')}` },
    'vcproxy serve: listening',
  );
  await shutdown.done;
  return 0;
}
