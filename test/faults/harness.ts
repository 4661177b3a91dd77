/**
 * Harness of the hardening suites (faults, security): the real simulator, an optional
 * tampering HTTP hop between proxy and simulator, and the real proxy (`startProxy`) whose
 * upstream client is wrapped by a recorder that decodes every signed message leaving the
 * proxy. The recorder is what proves "no counter was reused" (from the wire, not from the
 * proxy's own bookkeeping); the simulator's log proves "nothing executed twice".
 *
 * Servers bind 127.0.0.1 port 0 only; every loop is bounded.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { Logger } from 'pino';
import { Pool } from 'undici';
import { parseConfig, type ProxyConfig } from '../../src/config.js';
import { startProxy, type RunningProxy, type StartOptions } from '../../src/cli/serve.js';
import { generateKeyPair, loadKeyFromPem, type LocalKey } from '../../src/keys/index.js';
import { UpstreamClient, type Upstream, type UpstreamRequest, type UpstreamResponse } from '../../src/transport/client.js';
import { UniversalMessage } from '../../src/protocol/pb.js';
import { fromBase64 } from '../../src/protocol/routable.js';
import { startSim, type RunningSim, type SimLogEntry } from '../../src/sim/index.js';
import type { VehicleSpec } from '../../src/sim/types.js';

export const INFOTAINMENT = 3;
export const VCSEC = 2;

/** A VIN of the synthetic test fleet (valid alphabet, 17 characters). */
export function fleetVin(i: number): string {
  return `5YJ3FAULT${String(i).padStart(8, '0')}`;
}

export function testFleet(n: number, extra: Partial<VehicleSpec> = {}): { vehicles: VehicleSpec[] } {
  return {
    vehicles: Array.from({ length: n }, (_, i) => ({
      vin: fleetVin(i),
      model: '3',
      year: 2023,
      firmware: '2024.44.25',
      state: 'online' as const,
      ...extra,
    })),
  };
}

/** A JWT-shaped bearer token (the simulator accepts any non-empty token). */
export function fakeJwt(claims: Record<string, unknown> = { sub: 'fault-suite' }): string {
  const b = (o: unknown): string => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${b({ alg: 'ES256', typ: 'JWT' })}.${b(claims)}.c2lnbmF0dXJl`;
}

export interface KeyFile {
  path: string;
  dir: string;
  pem: string;
  key: LocalKey;
  cleanup(): Promise<void>;
}

export async function makeKeyFile(mode = 0o600): Promise<KeyFile> {
  const dir = await mkdtemp(join(tmpdir(), 'vcp-hardening-'));
  const pair = generateKeyPair();
  const path = join(dir, 'command-key.pem');
  await writeFile(path, pair.privatePem, { mode });
  return { path, dir, pem: pair.privatePem, key: loadKeyFromPem(pair.privatePem), cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** One signed message as it left the proxy. */
export interface WireRecord {
  vin: string;
  path: string;
  domain: number;
  handshake: boolean;
  epoch?: string;
  counter?: number;
}

/** Wraps the real upstream client and decodes every signed_command body it sends. */
export class RecordingUpstream implements Upstream {
  readonly sent: WireRecord[] = [];
  /** The signed command messages themselves (not handshakes), as sent. */
  readonly rawBodies: Uint8Array[] = [];
  /** Every upstream request (any path). */
  readonly requests: Array<{ method: string; path: string; origin: string }> = [];
  constructor(private readonly inner: Upstream) {}

  async request(req: UpstreamRequest): Promise<UpstreamResponse> {
    this.requests.push({ method: req.method, path: req.path, origin: req.origin });
    const m = /^\/api\/1\/vehicles\/([^/]+)\/signed_command$/.exec(req.path);
    if (m && req.body !== undefined) {
      const text = typeof req.body === 'string' ? req.body : Buffer.from(req.body).toString('utf8');
      const bytes = fromBase64((JSON.parse(text) as { routable_message: string }).routable_message);
      const msg = UniversalMessage.RoutableMessage.decode(bytes);
      if (!msg.sessionInfoRequest) this.rawBodies.push(bytes);
      const sig = msg.signatureData?.HMAC_PersonalizedData ?? msg.signatureData?.AES_GCM_PersonalizedData;
      this.sent.push({
        vin: m[1]!,
        path: req.path,
        domain: Number(msg.toDestination?.domain ?? 0),
        handshake: Boolean(msg.sessionInfoRequest),
        ...(sig ? { epoch: Buffer.from(sig.epoch ?? []).toString('hex'), counter: Number(sig.counter ?? 0) } : {}),
      });
    }
    return this.inner.request(req);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  commandsSent(vin?: string): WireRecord[] {
    return this.sent.filter((r) => !r.handshake && (!vin || r.vin === vin));
  }

  handshakesSent(vin?: string): WireRecord[] {
    return this.sent.filter((r) => r.handshake && (!vin || r.vin === vin));
  }
}

export type TamperMode =
  | { kind: 'pass' }
  /** Close the connection without forwarding the request (nothing reaches the vehicle). */
  | { kind: 'reset_before' }
  /** Forward (the vehicle executes), then close the connection instead of answering. */
  | { kind: 'reset_after' }
  /** Accept the request and never answer or forward it. */
  | { kind: 'hang_before' }
  /** Forward, then replace the answer body (status 200) with `rewrite(original body)`. */
  | { kind: 'rewrite'; rewrite: (body: string, req: { path: string; body: string }) => string }
  /** Forward, then answer 200 with headers and drip the body one byte per `everyMs`. */
  | { kind: 'drip'; everyMs: number }
  /** Answer 200 with a body of `bytes` bytes (never forwarded). */
  | { kind: 'huge'; bytes: number };

/**
 * An HTTP hop between the proxy and the simulator that forwards everything, except that
 * the next `signed_command` requests matching `match` get the queued tamper modes.
 */
export class TamperHop {
  private server!: Server;
  private pool!: Pool;
  url = '';
  private readonly queue: Array<{ mode: TamperMode; match: (path: string, body: string) => boolean }> = [];
  readonly seen: Array<{ path: string; tampered: string }> = [];
  /** Answers seen for signed_command, per VIN, in order (for replays). */
  readonly answers = new Map<string, string[]>();
  /** Bytes of 'huge' answers actually handed to the socket. */
  hugeWritten = 0;
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(private readonly upstream: string) {}

  async start(): Promise<this> {
    this.pool = new Pool(this.upstream, { connections: 64 });
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** Queues a mode for the next signed_command (optionally: whose body/path matches). */
  next(mode: TamperMode, match: (path: string, body: string) => boolean = () => true): void {
    this.queue.push({ mode, match });
  }

  pending(): number {
    return this.queue.length;
  }

  private take(path: string, body: string): TamperMode {
    if (!path.endsWith('/signed_command')) return { kind: 'pass' };
    const i = this.queue.findIndex((q) => q.match(path, body));
    if (i < 0) return { kind: 'pass' };
    return this.queue.splice(i, 1)[0]!.mode;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const path = req.url ?? '/';
    const mode = this.take(path, body);
    this.seen.push({ path, tampered: mode.kind });
    if (mode.kind === 'reset_before') {
      req.socket.destroy();
      return;
    }
    if (mode.kind === 'hang_before') return; // the client gives up (or the hop closes)
    if (mode.kind === 'huge') {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(64 * 1024, 0x61);
      let left = mode.bytes;
      const pump = (): void => {
        while (left > 0 && !res.destroyed) {
          const n = Math.min(left, chunk.length);
          left -= n;
          this.hugeWritten += n;
          if (!res.write(chunk.subarray(0, n))) return void res.once('drain', pump);
        }
        if (!res.destroyed) res.end();
      };
      res.on('error', () => undefined);
      pump();
      return;
    }
    const headers: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(req.headers)) {
      if (v !== undefined && !['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive'].includes(k)) headers[k] = v;
    }
    let up: { statusCode: number; headers: Record<string, string | string[] | undefined>; text: string };
    try {
      const r = await this.pool.request({ method: req.method as 'POST', path, headers, body: body.length ? body : null });
      up = { statusCode: r.statusCode, headers: r.headers, text: await r.body.text() };
    } catch {
      req.socket.destroy();
      return;
    }
    const vin = /\/vehicles\/([^/]+)\/signed_command$/.exec(path)?.[1];
    if (vin && up.statusCode === 200) {
      const list = this.answers.get(vin) ?? [];
      list.push(up.text);
      this.answers.set(vin, list);
    }
    if (mode.kind === 'reset_after') {
      req.socket.destroy();
      return;
    }
    let out = up.text;
    let status = up.statusCode;
    if (mode.kind === 'rewrite') {
      out = mode.rewrite(up.text, { path, body });
      status = 200;
    }
    const outHeaders: Record<string, string> = { 'content-type': 'application/json' };
    const ra = up.headers['retry-after'];
    if (typeof ra === 'string') outHeaders['retry-after'] = ra;
    if (mode.kind === 'drip') {
      res.writeHead(status, outHeaders);
      let i = 0;
      res.on('error', () => undefined);
      const t = setInterval(() => {
        if (res.destroyed || i >= out.length) {
          clearInterval(t);
          this.timers.delete(t);
          if (!res.destroyed) res.end();
          return;
        }
        res.write(out[i++]!);
      }, mode.everyMs);
      this.timers.add(t);
      return;
    }
    res.writeHead(status, outHeaders);
    res.end(out);
  }

  private closing: Promise<void> | undefined;
  close(): Promise<void> {
    return (this.closing ??= this.doClose());
  }

  private async doClose(): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    await new Promise<void>((r) => {
      this.server.close(() => r());
      this.server.closeAllConnections();
    });
    await this.pool.close();
  }
}

export interface Stack {
  sim: RunningSim;
  proxy: RunningProxy;
  recorder: RecordingUpstream;
  tamper: TamperHop | undefined;
  keyFile: KeyFile;
  token: string;
  /** POST a command through the proxy. */
  cmd(name: string, vin: string, body?: unknown, headers?: Record<string, string>): Promise<Response>;
  /** Sim log entries of executed signed commands (optionally for one VIN). */
  executed(vin?: string): SimLogEntry[];
  close(): Promise<void>;
}

export interface StackOptions {
  vehicles?: number;
  fleet?: { vehicles: VehicleSpec[] };
  tamper?: boolean;
  timeout?: string;
  limits?: boolean;
  extraArgs?: string[];
  logger?: Logger;
  simLogger?: Logger;
  start?: Partial<StartOptions>;
  keyFile?: KeyFile;
}

export async function startStack(o: StackOptions = {}): Promise<Stack> {
  const keyFile = o.keyFile ?? (await makeKeyFile());
  const sim = await startSim({
    port: 0,
    fleet: o.fleet ?? testFleet(o.vehicles ?? 4),
    enroll: [{ publicKey: keyFile.key.publicKey, role: 'owner' }],
    limits: o.limits ?? false,
    timeScale: 1e6,
    maxLogEntries: 200_000,
    ...(o.simLogger ? { logger: o.simLogger } : {}),
  });
  const tamper = o.tamper ? await new TamperHop(sim.url).start() : undefined;
  const upstreamUrl = tamper?.url ?? sim.url;
  const config = parseConfig(
    ['--key', keyFile.path, '--port', '0', '--upstream', upstreamUrl, '--timeout', o.timeout ?? '5s', '--log-level', 'silent', ...(o.extraArgs ?? [])],
    {},
  ) as ProxyConfig;
  const recorder = new RecordingUpstream(new UpstreamClient({ connections: 64, maxResponseBytes: config.maxResponseBytes }));
  const proxy = await startProxy(config, {
    upstream: recorder,
    sleep: async () => undefined,
    ...(o.logger ? { logger: o.logger } : {}),
    ...o.start,
  });
  const token = fakeJwt();
  return {
    sim,
    proxy,
    recorder,
    tamper,
    keyFile,
    token,
    cmd: (name, vin, body, headers) =>
      fetch(`${proxy.url}/api/1/vehicles/${vin}/command/${name}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
        body: body === undefined ? '{}' : typeof body === 'string' ? body : JSON.stringify(body),
      }),
    executed: (vin) => sim.sim.log(vin ? { vin } : {}).filter((e) => e.event === 'command' && e.executed === true),
    close: async () => {
      await proxy.close();
      await tamper?.close();
      await sim.close();
      if (!o.keyFile) await keyFile.cleanup();
    },
  };
}

/** No two executed entries share (vin, channel, epoch, signer, counter). */
export function expectNothingExecutedTwice(log: SimLogEntry[]): void {
  const seen = new Set<string>();
  const dupes: string[] = [];
  for (const e of log) {
    if (e.event !== 'command' || !e.executed) continue;
    const k = `${e.vin}/${e.channel}/${e.epoch}/${e.signer}/${e.counter}`;
    if (seen.has(k)) dupes.push(k);
    seen.add(k);
  }
  expect(dupes).toEqual([]);
}

/** No (vin, domain, epoch, counter) left the proxy twice. */
export function expectNoCounterReuse(recorder: RecordingUpstream): void {
  const seen = new Set<string>();
  const dupes: string[] = [];
  for (const r of recorder.sent) {
    if (r.handshake) continue;
    const k = `${r.vin}/${r.domain}/${r.epoch}/${r.counter}`;
    if (seen.has(k)) dupes.push(k);
    seen.add(k);
  }
  expect(dupes).toEqual([]);
}

export async function envelope(res: Response): Promise<{ status: number; body: Record<string, unknown> }> {
  const text = await res.text();
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    body = { raw: text };
  }
  return { status: res.status, body };
}
