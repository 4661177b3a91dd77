/**
 * Readiness state and graceful shutdown for the proxy's HTTP server.
 *
 * Owns: the `/ready` state (key loaded, listening, upstream reachable at start-up, not
 * draining), a start-up upstream probe, and draining a node `http.Server` (or
 * `https.Server`) on SIGTERM/SIGINT.
 *
 * Must not: exit the process, read process.env or start servers. The signal source, the
 * fetch used by the probe and the logger are injected so tests drive everything in
 * process; the CLI decides what to do once shutdown is done (normally exit 0).
 *
 * Why drain instead of exiting at once: a signed command in flight may already have
 * reached the vehicle. Cutting the client off would leave it unable to tell whether the
 * command ran (and tempted to resend a honk). So we stop accepting, let in-flight
 * requests finish up to a grace period, and only then cut what is left.
 */
import type { Server } from 'node:http';
import type { ServerResponse } from 'node:http';

// ---------------------------------------------------------------------------------------
// Readiness

export type ReadinessCheck = 'keyLoaded' | 'listening' | 'upstreamReachable';

export interface ReadinessSnapshot {
  ready: boolean;
  draining: boolean;
  checks: Record<ReadinessCheck, boolean>;
}

/**
 * What `/ready` reports. Ready means every check passed and the server is not draining;
 * once shutdown starts, `/ready` turns 503 so load balancers stop sending new work.
 */
export class Readiness {
  private readonly checks: Record<ReadinessCheck, boolean> = {
    keyLoaded: false,
    listening: false,
    upstreamReachable: false,
  };
  private isDraining = false;

  set(check: ReadinessCheck, ok: boolean): this {
    this.checks[check] = ok;
    return this;
  }

  markDraining(): void {
    this.isDraining = true;
  }

  get draining(): boolean {
    return this.isDraining;
  }

  snapshot(): ReadinessSnapshot {
    const checks = { ...this.checks };
    const ready = !this.isDraining && Object.values(checks).every(Boolean);
    return { ready, draining: this.isDraining, checks };
  }

  /** A web-standard `Response` for `/ready`: 200 when ready, 503 otherwise. */
  response(): Response {
    const snap = this.snapshot();
    return new Response(JSON.stringify(snap), {
      status: snap.ready ? 200 : 503,
      headers: { 'content-type': 'application/json', 'cache-control': 'no-store' },
    });
  }
}

export interface ProbeOptions {
  /** Injected for tests; defaults to the global fetch. */
  fetch?: typeof fetch;
  timeoutMs?: number;
}

export interface ProbeResult {
  reachable: boolean;
  status?: number;
  /** Why the probe failed (network error text or `timeout`); never contains secrets. */
  error?: string;
}

/**
 * Start-up probe: is the upstream answering at all? Any HTTP answer counts (even 404 or
 * 401, since the probe carries no token); only a network error or a timeout does not.
 * Pass the service's unauthenticated status URL, e.g. `${baseUrl}/status`.
 */
export async function probeUpstream(url: string, opts: ProbeOptions = {}): Promise<ProbeResult> {
  const doFetch = opts.fetch ?? fetch;
  const signal = AbortSignal.timeout(opts.timeoutMs ?? 5_000);
  try {
    const res = await doFetch(url, { method: 'GET', signal, redirect: 'manual' });
    // Release the connection; the body is not needed.
    await res.body?.cancel().catch(() => undefined);
    return { reachable: true, status: res.status };
  } catch (err) {
    const e = err as { name?: string; message?: string; cause?: { code?: string } };
    if (e.name === 'TimeoutError' || e.name === 'AbortError') return { reachable: false, error: 'timeout' };
    return { reachable: false, error: e.cause?.code ?? e.message ?? 'unreachable' };
  }
}

// ---------------------------------------------------------------------------------------
// Graceful shutdown

export type ShutdownSignal = 'SIGTERM' | 'SIGINT';

/** Where signals come from: `process` in production, an EventEmitter in tests. */
export interface SignalSource {
  on(signal: ShutdownSignal, listener: () => void): unknown;
  removeListener(signal: ShutdownSignal, listener: () => void): unknown;
}

export interface ShutdownLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface ShutdownOptions {
  /** How long in-flight requests may run after shutdown starts. Default 25 s. */
  graceMs?: number;
  /** Default `process`. Pass `null` to not listen to signals (call `shutdown()` yourself). */
  signals?: SignalSource | null;
  /** Marked draining as soon as shutdown starts, so `/ready` answers 503. */
  readiness?: Readiness;
  logger?: ShutdownLogger;
  /**
   * Runs after the server has closed (or been cut at the grace limit), e.g. to close
   * upstream connection pools and flush logs. Errors are logged, not thrown.
   */
  onClosed?: () => void | Promise<void>;
}

export interface ShutdownResult {
  /** The signal name, or the reason given to `shutdown()`. */
  reason: string;
  /** True when the grace period ran out (or a second signal came) and requests were cut. */
  forced: boolean;
  /** Requests still running when they were cut. */
  abandoned: number;
}

export interface ShutdownHandle {
  /** Starts draining (idempotent: later calls return the same promise). */
  shutdown(reason?: string): Promise<ShutdownResult>;
  /** Resolves when a shutdown, however triggered, has finished. */
  readonly done: Promise<ShutdownResult>;
  /** Requests being handled right now. */
  inflight(): number;
  /** Stops listening to signals (tests; or when the server is closed some other way). */
  dispose(): void;
}

const DEFAULT_GRACE_MS = 25_000;

/**
 * Attaches graceful shutdown to a server. Call it right after creating the server (before
 * or after `listen`); it counts requests from then on.
 *
 * On SIGTERM/SIGINT (or `shutdown()`): readiness goes to draining; the server stops
 * accepting connections; idle keep-alive connections are closed at once and busy ones as
 * soon as their response ends (answers sent while draining carry `Connection: close`);
 * when the last request finishes the promise resolves. If the grace period ends first,
 * every remaining connection is destroyed. A second signal while draining forces the
 * same cut immediately (an operator pressing Ctrl-C twice means it).
 */
export function gracefulShutdown(server: Server, opts: ShutdownOptions = {}): ShutdownHandle {
  const graceMs = opts.graceMs ?? DEFAULT_GRACE_MS;
  const signals = opts.signals === undefined ? process : opts.signals;
  const log = opts.logger;

  let active = 0;
  let draining = false;
  let forceNow: (() => void) | undefined;
  let started: Promise<ShutdownResult> | undefined;
  let resolveDone!: (r: ShutdownResult) => void;
  const done = new Promise<ShutdownResult>((resolve) => {
    resolveDone = resolve;
  });

  const closeIdleSoon = (): void => {
    // The connection becomes idle only after the response's bookkeeping completes, so
    // look again on the next turn of the event loop.
    setImmediate(() => server.closeIdleConnections());
  };

  const onRequest = (_req: unknown, res: ServerResponse): void => {
    active++;
    if (draining && !res.headersSent) res.setHeader('connection', 'close');
    let counted = true;
    res.once('close', () => {
      if (!counted) return;
      counted = false;
      active--;
      if (draining) closeIdleSoon();
    });
  };
  server.on('request', onRequest);

  const onSignal = (signal: ShutdownSignal) => (): void => {
    if (started) {
      log?.warn({ signal }, 'second shutdown signal: closing remaining connections now');
      forceNow?.();
      return;
    }
    void shutdown(signal);
  };
  const listeners: Array<[ShutdownSignal, () => void]> = [
    ['SIGTERM', onSignal('SIGTERM')],
    ['SIGINT', onSignal('SIGINT')],
  ];
  for (const [sig, fn] of listeners) signals?.on(sig, fn);

  const dispose = (): void => {
    for (const [sig, fn] of listeners) signals?.removeListener(sig, fn);
  };

  function shutdown(reason = 'shutdown'): Promise<ShutdownResult> {
    if (started) return started;
    started = run(reason);
    void started.then(resolveDone);
    return started;
  }

  async function run(reason: string): Promise<ShutdownResult> {
    draining = true;
    opts.readiness?.markDraining();
    log?.info({ reason, inflight: active, graceMs }, 'shutting down: no new connections, finishing in-flight requests');

    const closed = new Promise<void>((resolve) => {
      if (!server.listening) {
        // Never listened or already closed: nothing to wait for but open connections.
        server.closeAllConnections();
        resolve();
        return;
      }
      server.close(() => resolve());
    });
    // Node closes idle keep-alive connections in close() (v19+); do it explicitly anyway
    // so the behaviour does not hinge on the runtime version.
    server.closeIdleConnections();

    let forced = false;
    let abandoned = 0;
    let timer: NodeJS.Timeout | undefined;
    const cut = new Promise<void>((resolve) => {
      const doCut = (): void => {
        if (forced) return;
        forced = true;
        abandoned = active;
        server.closeAllConnections();
        resolve();
      };
      forceNow = doCut;
      timer = setTimeout(doCut, graceMs);
      // The timer alone must not keep the process alive once everything else is closed.
      timer.unref();
    });

    await Promise.race([closed, cut]);
    if (timer) clearTimeout(timer);
    forceNow = undefined;
    if (forced) {
      log?.warn({ reason, abandoned, graceMs }, 'grace period over: cut the remaining requests');
      await closed;
    }

    dispose();
    server.removeListener('request', onRequest);
    if (opts.onClosed) {
      try {
        await opts.onClosed();
      } catch (err) {
        log?.warn({ err: err instanceof Error ? err.message : String(err) }, 'error while closing resources');
      }
    }
    const result: ShutdownResult = { reason, forced, abandoned };
    log?.info(result, 'shutdown complete');
    return result;
  }

  return { shutdown, done, inflight: () => active, dispose };
}
