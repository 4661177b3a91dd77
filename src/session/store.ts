/**
 * Session storage by (VIN, domain). The default keeps live `Session` objects in an
 * in-memory LRU bounded by VIN count (one entry holds both domains of a vehicle).
 *
 * The interface is async so a later issue can add a file store and a Redis store shared by
 * replicas (those serialize with `Session.toJSON`/`fromJSON`). A store must persist the
 * counter before the signed message is sent, so the dispatcher calls `set` after signing.
 */
import { Domain, type DomainId } from '../protocol/domains.js';
import { LruMap } from '../transport/lru.js';

export interface SessionStore<S> {
  get(vin: string, domain: DomainId): Promise<S | undefined> | S | undefined;
  set(vin: string, domain: DomainId, session: S): Promise<void> | void;
  delete(vin: string, domain: DomainId): Promise<void> | void;
}

/**
 * The two domains of one vehicle. A plain two-slot object, not a `Map`: a Map costs ~400
 * bytes even with one entry, which alone would put a cached session over the 1 KB budget.
 */
class DomainSlots<S> {
  vcsec: S | undefined = undefined;
  infotainment: S | undefined = undefined;
  /** Any other domain number (not used by today's vehicles, kept for completeness). */
  other: Map<DomainId, S> | undefined = undefined;

  get(domain: DomainId): S | undefined {
    if (domain === Domain.VEHICLE_SECURITY) return this.vcsec;
    if (domain === Domain.INFOTAINMENT) return this.infotainment;
    return this.other?.get(domain);
  }
  set(domain: DomainId, s: S | undefined): void {
    if (domain === Domain.VEHICLE_SECURITY) this.vcsec = s;
    else if (domain === Domain.INFOTAINMENT) this.infotainment = s;
    else if (s === undefined) this.other?.delete(domain);
    else (this.other ??= new Map()).set(domain, s);
  }
  get empty(): boolean {
    return this.vcsec === undefined && this.infotainment === undefined && !this.other?.size;
  }
}

export class MemorySessionStore<S> implements SessionStore<S> {
  private readonly lru: LruMap<string, DomainSlots<S>>;
  constructor(maxVins = 10_000) {
    this.lru = new LruMap(maxVins);
  }
  get size(): number {
    return this.lru.size;
  }
  get(vin: string, domain: DomainId): S | undefined {
    return this.lru.get(vin)?.get(domain);
  }
  /**
   * Stores a session. Recency is refreshed by `get` (every command reads its session
   * first), not again here: an update to a VIN already cached keeps its place.
   */
  set(vin: string, domain: DomainId, session: S): void {
    let m = this.lru.peek(vin);
    if (!m) {
      m = new DomainSlots<S>();
      this.lru.set(vin, m);
    }
    m.set(domain, session);
  }
  delete(vin: string, domain: DomainId): void {
    const m = this.lru.peek(vin);
    if (!m) return;
    m.set(domain, undefined);
    if (m.empty) this.lru.delete(vin);
  }
}
