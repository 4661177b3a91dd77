/**
 * A bounded Map with least-recently-used eviction (Map keeps insertion order; a hit is
 * re-inserted at the end). O(1) per operation, no timers.
 */
export class LruMap<K, V> {
  private readonly map = new Map<K, V>();
  constructor(readonly limit: number) {
    if (!(limit >= 1)) throw new RangeError('LruMap limit must be at least 1');
  }
  get size(): number {
    return this.map.size;
  }
  get(key: K): V | undefined {
    const v = this.map.get(key);
    if (v === undefined) return undefined;
    this.map.delete(key);
    this.map.set(key, v);
    return v;
  }
  /** Reads without refreshing recency. */
  peek(key: K): V | undefined {
    return this.map.get(key);
  }
  set(key: K, value: V): void {
    if (this.map.has(key)) this.map.delete(key);
    else if (this.map.size >= this.limit) {
      const oldest = this.map.keys().next();
      if (!oldest.done) this.map.delete(oldest.value);
    }
    this.map.set(key, value);
  }
  delete(key: K): boolean {
    return this.map.delete(key);
  }
  clear(): void {
    this.map.clear();
  }
}

/** LRU whose entries also expire after `ttlMs` (used for "VIN does not support signing"). */
export class ExpiringSet<K> {
  private readonly lru: LruMap<K, number>;
  constructor(
    limit: number,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.lru = new LruMap(limit);
  }
  add(key: K): void {
    this.lru.set(key, this.now() + this.ttlMs);
  }
  has(key: K): boolean {
    const exp = this.lru.peek(key);
    if (exp === undefined) return false;
    if (exp <= this.now()) {
      this.lru.delete(key);
      return false;
    }
    return true;
  }
  get size(): number {
    return this.lru.size;
  }
}
