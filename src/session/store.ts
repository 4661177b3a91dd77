/**
 * Session storage by (VIN, domain). The default keeps live `Session` objects in an
 * in-memory LRU bounded by VIN count (one entry holds both domains of a vehicle).
 *
 * The interface is async so a later issue can add a file store and a Redis store shared by
 * replicas (those serialize with `Session.toJSON`/`fromJSON`). A store must persist the
 * counter before the signed message is sent, so the dispatcher calls `set` after signing.
 */
import type { DomainId } from '../protocol/domains.js';
import { LruMap } from '../transport/lru.js';

export interface SessionStore<S> {
  get(vin: string, domain: DomainId): Promise<S | undefined> | S | undefined;
  set(vin: string, domain: DomainId, session: S): Promise<void> | void;
  delete(vin: string, domain: DomainId): Promise<void> | void;
}

export class MemorySessionStore<S> implements SessionStore<S> {
  private readonly lru: LruMap<string, Map<DomainId, S>>;
  constructor(maxVins = 10_000) {
    this.lru = new LruMap(maxVins);
  }
  get size(): number {
    return this.lru.size;
  }
  get(vin: string, domain: DomainId): S | undefined {
    return this.lru.get(vin)?.get(domain);
  }
  set(vin: string, domain: DomainId, session: S): void {
    let m = this.lru.get(vin);
    if (!m) {
      m = new Map();
      this.lru.set(vin, m);
    }
    m.set(domain, session);
  }
  delete(vin: string, domain: DomainId): void {
    const m = this.lru.peek(vin);
    if (!m) return;
    m.delete(domain);
    if (m.size === 0) this.lru.delete(vin);
  }
}
