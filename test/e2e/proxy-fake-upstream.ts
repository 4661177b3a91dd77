/**
 * A minimal fake of the service + vehicles for proxy tests, built on the vehicle-side
 * verifier primitives (src/crypto/verifier.ts): its vehicles authenticate commands the way
 * real ones do (epoch, counter window, expiry, HMAC over VIN-personalized metadata) and seal
 * answers with AES-GCM. It records everything so tests can assert on what left the proxy,
 * and it takes one-shot fault injections for precise control.
 *
 * The full simulator (src/sim) is used where it exists; this fake stays for faults the
 * simulator does not model (hang after executing, drop the connection, 421, 5xx).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createECDH, randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { DomainVerifier } from '../../src/crypto/verifier.js';
import { CarServer, UniversalMessage } from '../../src/protocol/pb.js';
import type { Upstream, UpstreamRequest, UpstreamResponse } from '../../src/transport/client.js';
import { VcpError } from '../../src/protocol/errors.js';

export const VSEC = 2;
export const INFO = 3;

export interface FakeRequest {
  method: string;
  /** Path plus query. */
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export interface FakeAnswer {
  status: number;
  headers?: Record<string, string | string[]>;
  body?: string | Buffer;
}

/** What to do with one signed_command request, instead of (or after) the vehicle. */
export type Injection =
  | { kind: 'answer'; answer: FakeAnswer } // answer without reaching the vehicle
  | { kind: 'execute_then'; then: 'hang' | 'destroy' | FakeAnswer }; // vehicle executes, answer lost/replaced

interface Vehicle {
  vin: string;
  verifiers: Record<number, DomainVerifier<true>>;
}

function scalar(): Uint8Array {
  const e = createECDH('prime256v1');
  e.generateKeys();
  // getPrivateKey() drops leading zero bytes (1 key in 256): left-pad to 32 bytes.
  const d = e.getPrivateKey();
  const out = new Uint8Array(32);
  out.set(d, 32 - d.length);
  return out;
}

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

export const ASLEEP_BODY = JSON.stringify({
  response: null,
  error: 'vehicle unavailable: vehicle is offline or asleep',
  error_description: '',
});

export class FakeFleet {
  readonly vehicles = new Map<string, Vehicle>();
  /** Every request received, in order. */
  readonly requests: FakeRequest[] = [];
  /** Handshakes per `${vin}:${domain}`. */
  readonly handshakes = new Map<string, number>();
  /** Commands the vehicles executed (authenticated), in order. */
  readonly executed: Array<{ vin: string; domain: number; payload: Uint8Array; counter: number }> = [];
  /** Faults the vehicles answered with. */
  readonly faults: Array<{ vin: string; domain: number; fault: number }> = [];
  /** Counters seen per `${vin}:${domain}:${epoch}`; a repeat increments `counterReuse`. */
  private readonly counters = new Map<string, Set<number>>();
  counterReuse = 0;
  readonly asleep = new Set<string>();
  readonly unsupported = new Set<string>();
  /** One-shot injections for signed_command, consumed in order. */
  readonly inject: Injection[] = [];
  /** Infotainment answers result:false with this reason when set. */
  carReason: string | undefined;
  /** Answer for any path not modelled (default: echo). */
  otherwise: ((req: FakeRequest) => FakeAnswer) | undefined;
  /** Keys enrolled on every vehicle (hex of the 65-byte point). */
  readonly enrolled = new Set<string>();

  constructor(vins: readonly string[], enrolled: readonly Uint8Array[], opts: { now?: () => number } = {}) {
    for (const k of enrolled) this.enrolled.add(hex(k));
    const now = opts.now ?? Date.now;
    for (const vin of vins) {
      const mk = (domain: number): DomainVerifier<true> =>
        new DomainVerifier<true>({
          privateScalar: scalar(),
          domain,
          vin,
          now,
          random: (n) => randomBytes(n),
          lookup: (pub) => (this.enrolled.has(hex(pub)) ? true : undefined),
        });
      this.vehicles.set(vin, { vin, verifiers: { [VSEC]: mk(VSEC), [INFO]: mk(INFO) } });
    }
  }

  /** Simulates a reboot of both domains: new epochs, counters reset. */
  reboot(vin: string): void {
    const v = this.vehicles.get(vin)!;
    v.verifiers[VSEC]!.rotateEpoch();
    v.verifiers[INFO]!.rotateEpoch();
  }

  handshakeCount(vin: string, domain: number): number {
    return this.handshakes.get(`${vin}:${domain}`) ?? 0;
  }

  countPath(re: RegExp): number {
    return this.requests.filter((r) => re.test(r.path)).length;
  }

  /** Core request handler; 'hang' / 'destroy' mean the answer never arrives. */
  handle(req: FakeRequest): FakeAnswer | 'hang' | 'destroy' {
    this.requests.push(req);
    const m = /^\/api\/1\/vehicles\/([^/?]+)\/(signed_command|wake_up|command\/([^/?]+))(?:\?.*)?$/.exec(req.path);
    if (m && req.method === 'POST') {
      const vin = m[1]!;
      if (m[2] === 'signed_command') return this.signed(vin, req);
      if (this.asleep.has(vin) && m[2] !== 'wake_up') return { status: 408, body: ASLEEP_BODY };
      if (m[2] === 'wake_up') {
        this.asleep.delete(vin);
        return json(200, { response: { vin, state: 'online' } });
      }
      return json(200, { response: { result: true, reason: '', rest: true } });
    }
    if (req.path === '/api/1/vehicles/fleet_telemetry_config_jws') {
      return json(200, { response: { updated_vehicles: 1, skipped_vehicles: {} } });
    }
    if (this.otherwise) return this.otherwise(req);
    return {
      status: 200,
      headers: { 'content-type': 'application/json', 'x-upstream': 'fake', 'set-cookie': ['a=1', 'b=2'] },
      body: JSON.stringify({
        echo: { method: req.method, path: req.path, headers: req.headers, body: req.body.toString('utf8') },
      }),
    };
  }

  private signed(vin: string, req: FakeRequest): FakeAnswer | 'hang' | 'destroy' {
    const inj = this.inject.shift();
    if (inj?.kind === 'answer') return inj.answer;
    if (this.unsupported.has(vin)) return json(422, { response: null, error: 'invalid_resource', error_description: 'vehicle does not support signed commands' });
    if (this.asleep.has(vin)) return { status: 408, body: ASLEEP_BODY };
    const v = this.vehicles.get(vin);
    if (!v) return json(404, { response: null, error: 'not_found', error_description: '' });
    let bytes: Uint8Array;
    try {
      const b64 = (JSON.parse(req.body.toString('utf8')) as { routable_message: string }).routable_message;
      bytes = new Uint8Array(Buffer.from(b64, 'base64'));
    } catch {
      return json(400, { response: null, error: 'invalid_request', error_description: 'bad body' });
    }
    const msg = UniversalMessage.RoutableMessage.decode(bytes);
    const domain = msg.toDestination?.domain ?? 0;
    const verifier = v.verifiers[domain];
    if (!verifier) return json(400, { response: null, error: 'invalid_request', error_description: 'bad domain' });
    if (msg.sessionInfoRequest) {
      this.handshakes.set(`${vin}:${domain}`, this.handshakeCount(vin, domain) + 1);
    } else {
      const hm = msg.signatureData?.HMAC_PersonalizedData;
      if (hm) {
        const key = `${vin}:${domain}:${hex(hm.epoch ?? new Uint8Array())}`;
        let set = this.counters.get(key);
        if (!set) this.counters.set(key, (set = new Set()));
        const c = (hm.counter ?? 0) >>> 0;
        if (set.has(c)) this.counterReuse++;
        set.add(c);
      }
    }
    let executed = false;
    const answer = verifier.handle(msg, (cmd) => {
      executed = true;
      this.executed.push({ vin, domain, payload: cmd.payload, counter: cmd.counter });
      if (domain === INFO) {
        const resp = this.carReason
          ? { actionStatus: { result: CarServer.OperationStatus_E.OPERATIONSTATUS_ERROR, resultReason: { plainText: this.carReason } } }
          : { actionStatus: { result: CarServer.OperationStatus_E.OPERATIONSTATUS_OK } };
        return { payload: CarServer.Response.encode(resp).finish() };
      }
      return { payload: new Uint8Array() };
    });
    if (!executed && !msg.sessionInfoRequest && answer) {
      const f = UniversalMessage.RoutableMessage.decode(answer).signedMessageStatus?.signedMessageFault ?? 0;
      if (f) this.faults.push({ vin, domain, fault: f });
    }
    if (executed && inj?.kind === 'execute_then') return inj.then;
    if (inj) this.inject.unshift(inj); // not consumed by a handshake/fault: keep it
    if (!answer) return json(500, { response: null, error: 'internal', error_description: '' });
    return json(200, { response: Buffer.from(answer).toString('base64') });
  }

  /** An in-process `Upstream` (no sockets) for dispatcher unit tests. */
  asUpstream(): Upstream & { calls: UpstreamRequest[] } {
    const calls: UpstreamRequest[] = [];
    return {
      calls,
      request: async (r: UpstreamRequest): Promise<UpstreamResponse> => {
        calls.push(r);
        const body = r.body === undefined ? Buffer.alloc(0) : Buffer.from(r.body as Uint8Array);
        const a = this.handle({ method: r.method, path: r.path, headers: r.headers, body });
        if (a === 'hang') {
          throw new VcpError('upstream_timeout', 'timed out', { status: 504, mayHaveSucceeded: true });
        }
        if (a === 'destroy') {
          throw new VcpError('upstream_connection_lost', 'lost', { status: 503, mayHaveSucceeded: true });
        }
        const headers: Record<string, string | string[]> = { ...(a.headers ?? {}) };
        return { status: a.status, headers, body: Buffer.from(a.body ?? '') };
      },
      close: async () => undefined,
    };
  }

  /** Serves the fake on 127.0.0.1, port 0. */
  async listen(): Promise<{ url: string; close(): Promise<void> }> {
    const hung: ServerResponse[] = [];
    const server: Server = createServer((inc: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      inc.on('data', (c: Buffer) => chunks.push(c));
      inc.on('end', () => {
        const a = this.handle({ method: inc.method ?? 'GET', path: inc.url ?? '/', headers: inc.headers, body: Buffer.concat(chunks) });
        if (a === 'hang') {
          hung.push(res);
          return;
        }
        if (a === 'destroy') {
          inc.socket.destroy();
          return;
        }
        res.writeHead(a.status, { 'content-type': 'application/json', ...(a.headers ?? {}) });
        res.end(a.body ?? '');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return {
      url: `http://127.0.0.1:${port}`,
      close: () =>
        new Promise<void>((resolve) => {
          for (const r of hung) r.socket?.destroy();
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    };
  }
}

function json(status: number, body: unknown): FakeAnswer {
  return { status, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
}

/** A fake JWT (unsigned; the proxy never verifies it) with the given claims. */
export function fakeJwt(claims: Record<string, unknown>): string {
  const b = (o: unknown): string => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${b({ alg: 'RS256', typ: 'JWT' })}.${b(claims)}.c2lnbmF0dXJl`;
}

/**
 * Copies the committed example key to a private temp file with mode 0600 (git does not
 * keep modes, and the keystore refuses group/other-readable keys).
 */
export async function exampleKeyFile(): Promise<{ path: string; cleanup(): Promise<void> }> {
  const { mkdtemp, copyFile, chmod, rm } = await import('node:fs/promises');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const dir = await mkdtemp(join(tmpdir(), 'vcproxy-test-'));
  const path = join(dir, 'private-key.pem');
  await copyFile(new URL('../../keys.example/private-key.pem', import.meta.url), path);
  await chmod(path, 0o600);
  return { path, cleanup: () => rm(dir, { recursive: true, force: true }) };
}
