/**
 * The simulated fleet: vehicles, enrolment, the daily limits, the activity log and the
 * fault-injection controls (the same controls `/_sim/…` exposes over HTTP).
 *
 * Time: `now` and `random` are injected; timers (wake-up, software update) go through
 * `schedule`, which records them so `close()` can cancel every one.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { parsePublicKey } from '../keys/index.js';
import { VcpError } from '../protocol/errors.js';
import type { Logger } from '../log.js';
import { DEFAULT_FLEET } from './fleet.js';
import { DOMAIN_INFOTAINMENT, DOMAIN_VCSEC } from './domain.js';
import { DailyLimits } from './limits.js';
import { isRoleName, type Connectivity, type FleetSpec, type RoleName } from './types.js';
import { SimVehicle, type SimLogEntry } from './vehicle.js';

export interface EnrollSpec {
  /** 65-byte point, or PEM / 130-hex text. */
  publicKey: Uint8Array | string;
  role?: RoleName | string;
  /** Only these VINs (default: every vehicle). */
  vins?: string[];
}

export interface SimOptions {
  fleet?: FleetSpec;
  enroll?: EnrollSpec[];
  /** Divides simulated waits (wake-up 10–60 s, update countdown). Default 1. */
  timeScale?: number;
  /** Discovery-tier daily limits; default on. */
  limits?: boolean;
  logger?: Logger;
  now?: () => number;
  random?: (n: number) => Uint8Array;
  /** Keep at most this many log entries (oldest dropped). Default 10 000. */
  maxLogEntries?: number;
}

/** One pending injected fault, consumed by the next matching vehicle request. */
export type Injection =
  | { kind: 'fail'; status: number; error: string; description: string }
  | { kind: 'drop'; holdMs: number }
  | { kind: 'delay'; ms: number };

export class Sim {
  readonly vehicles: SimVehicle[] = [];
  readonly limits: DailyLimits;
  readonly timeScale: number;
  readonly now: () => number;
  readonly random: (n: number) => Uint8Array;
  readonly logger: Logger | undefined;
  private entries: SimLogEntry[] = [];
  private seq = 0;
  private readonly maxLog: number;
  private timers = new Set<NodeJS.Timeout>();
  private injections = new Map<string, Injection[]>();
  private fleet: FleetSpec;
  private enrolled: EnrollSpec[] = [];
  /** Key of the log's body digests (see bodyDigest); never leaves the process. */
  private readonly digestKey: Uint8Array;
  closed = false;

  constructor(opts: SimOptions = {}) {
    this.now = opts.now ?? Date.now;
    this.random = opts.random ?? ((n) => new Uint8Array(randomBytes(n)));
    this.timeScale = opts.timeScale && opts.timeScale > 0 ? opts.timeScale : 1;
    this.limits = new DailyLimits(this.now, opts.limits ?? true);
    this.logger = opts.logger;
    this.maxLog = opts.maxLogEntries ?? 10_000;
    this.fleet = opts.fleet ?? DEFAULT_FLEET;
    // Not from the injected `random`: the key never affects behaviour, and drawing from the
    // injected source would shift every vehicle key and epoch a seeded test expects.
    this.digestKey = new Uint8Array(randomBytes(32));
    this.build();
    for (const e of opts.enroll ?? []) this.enroll(e);
  }

  private build(): void {
    this.vehicles.length = 0;
    this.fleet.vehicles.forEach((spec, i) => {
      this.vehicles.push(
        new SimVehicle(spec, i, {
          now: this.now,
          random: this.random,
          schedule: (ms, fn) => this.schedule(ms, fn),
          timeScale: this.timeScale,
          log: (e) => this.record(e),
          takeLimit: (kind) => this.limits.take(spec.vin, kind),
          digest: (body) => this.bodyDigest(body),
        }),
      );
    });
  }

  schedule(ms: number, fn: () => void): void {
    if (this.closed) return;
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, Math.max(0, ms));
    t.unref?.();
    this.timers.add(t);
  }

  private record(e: Omit<SimLogEntry, 'seq' | 'time'>): void {
    const entry: SimLogEntry = { seq: ++this.seq, time: new Date(this.now()).toISOString(), ...e };
    this.entries.push(entry);
    if (this.entries.length > this.maxLog) this.entries.splice(0, this.entries.length - this.maxLog);
    this.logger?.debug({ sim: entry }, 'sim vehicle event');
  }

  /** Log entries, optionally for one VIN and after a sequence number. */
  log(filter: { vin?: string; since?: number } = {}): SimLogEntry[] {
    return this.entries.filter((e) => (!filter.vin || e.vin === filter.vin) && (filter.since === undefined || e.seq > filter.since));
  }

  /**
   * The `body_digest` the log records for a REST command body: HMAC-SHA256 (hex) under a
   * per-simulator random key. Compare it with what you sent to prove the body arrived
   * byte for byte.
   */
  bodyDigest(body: string | Uint8Array): string {
    return createHmac('sha256', this.digestKey).update(typeof body === 'string' ? Buffer.from(body, 'utf8') : body).digest('hex');
  }

  clearLog(): void {
    this.entries = [];
  }

  /** Finds a vehicle by VIN or by id (number or its string form). */
  find(idOrVin: string | number): SimVehicle | undefined {
    const s = String(idOrVin);
    return this.vehicles.find((v) => v.vin === s || String(v.id) === s);
  }

  vehicle(idOrVin: string | number): SimVehicle {
    const v = this.find(idOrVin);
    if (!v) throw new VcpError('not_found', `No simulated vehicle ${String(idOrVin)}; list them with GET /api/1/vehicles`, { status: 404 });
    return v;
  }

  /** Enrols a public key on every vehicle (or on `vins`). */
  enroll(e: EnrollSpec): void {
    const role = (e.role ?? 'owner') as string;
    if (!isRoleName(role) || role === 'none') {
      throw new VcpError('invalid_role', `Unknown key role "${role}"; use owner, driver, fleet_manager, vehicle_monitor, charging_manager, guest or service`, { status: 400 });
    }
    const pub = parsePublicKey(e.publicKey);
    const targets = e.vins ? e.vins.map((v) => this.vehicle(v)) : this.vehicles;
    for (const v of targets) v.enroll(pub, role);
    this.enrolled.push({ publicKey: pub, role, ...(e.vins ? { vins: e.vins } : {}) });
  }

  // ---------------------------------------------------------------- fault injection

  /** Reboots a domain ('vcsec' | 'infotainment' | 'both'): new epoch, counters reset. */
  reboot(vin: string, domain: 'vcsec' | 'infotainment' | 'both' = 'both'): void {
    const v = this.vehicle(vin);
    if (domain !== 'infotainment') v.vcsec.reboot();
    if (domain !== 'vcsec') v.infotainment.reboot();
    this.record({ vin: v.vin, channel: 'sim', event: 'reboot', reason: domain });
  }

  setState(vin: string, state: Connectivity): void {
    const v = this.vehicle(vin);
    v.setConnectivity(state);
    this.record({ vin: v.vin, channel: 'sim', event: 'state', reason: state });
  }

  /** Skews a domain's clock by `seconds` (added to any earlier skew unless `absolute`). */
  skewClock(vin: string, domain: 'vcsec' | 'infotainment', seconds: number, absolute = false): void {
    const v = this.vehicle(vin);
    const d = domain === 'vcsec' ? v.vcsec : v.infotainment;
    d.skewSec = absolute ? seconds : d.skewSec + seconds;
    this.record({ vin: v.vin, channel: 'sim', event: 'skew_clock', reason: `${domain} ${d.skewSec}s` });
  }

  /** Queues an injection for the next vehicle request (of `vin`, or of any vehicle). */
  inject(inj: Injection, vin?: string, count = 1): void {
    const key = vin ? this.vehicle(vin).vin : '*';
    const q = this.injections.get(key) ?? [];
    for (let i = 0; i < Math.max(1, Math.min(count, 1000)); i++) q.push(inj);
    this.injections.set(key, q);
  }

  /** Takes the next pending injection for a request to `vin`. */
  takeInjection(vin: string): Injection | undefined {
    for (const key of [vin, '*']) {
      const q = this.injections.get(key);
      if (q && q.length > 0) {
        const inj = q.shift();
        if (q.length === 0) this.injections.delete(key);
        return inj;
      }
    }
    return undefined;
  }

  pendingInjections(): Record<string, Injection[]> {
    return Object.fromEntries(this.injections.entries());
  }

  /** Back to the initial fleet: fresh vehicle state, new epochs, limits/log/injections cleared; enrolments kept. */
  reset(vin?: string): void {
    if (vin) {
      const v = this.vehicle(vin);
      v.resetState();
      v.vcsec.reboot();
      v.infotainment.reboot();
      v.vcsec.skewSec = 0;
      v.infotainment.skewSec = 0;
      this.injections.delete(v.vin);
      return;
    }
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.build();
    const enrolled = this.enrolled;
    this.enrolled = [];
    for (const e of enrolled) this.enroll(e);
    this.limits.reset();
    this.injections.clear();
    this.entries = [];
  }

  /** Diagnostic view of one vehicle (no private material). */
  describe(vin: string): Record<string, unknown> {
    const v = this.vehicle(vin);
    return {
      vin: v.vin,
      state: v.connectivity,
      waking: v.waking,
      firmware: v.firmware,
      signed_commands: v.signedCommands,
      keys: [...v.keys.values()].map((k) => ({ public_key: Buffer.from(k.publicKey).toString('hex'), role: k.role })),
      domains: [v.vcsec.describe(), v.infotainment.describe()],
      limits: this.limits.usage(v.vin),
    };
  }

  close(): void {
    this.closed = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }
}

export { DOMAIN_VCSEC, DOMAIN_INFOTAINMENT };
