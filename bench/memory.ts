/**
 * Benchmark child (run with --expose-gc): memory held per cached session. Builds N
 * synthetic sessions — distinct VINs, epochs, counters, vehicle keys drawn from a pool —
 * with `Session.fromJSON` (the real class, holding its real derived keys) and keeps them in
 * the proxy's real `MemorySessionStore`, then reports (RSS after − RSS before) / N after a
 * full GC, plus the heap-only and external (ArrayBuffer) figures, and the marginal RSS per
 * session over a second batch of N (see the comment there). The client key memoizes ECDH
 * per vehicle key only to keep start-up fast; the shared secret is not part of what a
 * session stores.
 * Usage: memory.ts <n>
 */
import { createECDH, randomBytes } from 'node:crypto';
import { Session, type SessionJSON } from '../src/crypto/session.js';
import type { CommandKey } from '../src/crypto/types.js';
import { LocalKey } from '../src/keys/index.js';
import { MemorySessionStore } from '../src/session/store.js';
import { Domain } from '../src/protocol/domains.js';

const n = Number(process.argv[2] ?? 100_000);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');

const ecdh = createECDH('prime256v1');
ecdh.generateKeys();
const local = LocalKey.fromScalar(new Uint8Array(ecdh.getPrivateKey()));
const memo = new Map<string, Uint8Array>();
const key: CommandKey = {
  publicKey: local.publicKey,
  sharedSecretX(peer) {
    const h = Buffer.from(peer).toString('hex');
    let s = memo.get(h);
    if (!s) memo.set(h, (s = local.sharedSecretX(peer)));
    return s;
  },
  signJws: (input) => local.signJws(input),
};
const vehicleKeys: string[] = [];
for (let i = 0; i < 1000; i++) {
  const e = createECDH('prime256v1');
  e.generateKeys();
  vehicleKeys.push(e.getPublicKey('hex'));
}
const clientHex = Buffer.from(local.publicKey).toString('hex');
const jsonFor = (i: number): SessionJSON => ({
  v: 1,
  vin: `5YJ3MEMRY${String(i).padStart(8, '0')}`,
  domain: Domain.INFOTAINMENT,
  clientPublicKey: clientHex,
  vehiclePublicKey: vehicleKeys[i % vehicleKeys.length]!,
  epoch: randomBytes(16).toString('hex'),
  counter: i % 1000,
  setTime: 1000 + (i % 5000),
  clockOffsetMs: -1_700_000_000_000 + i,
});
// Warm the memo and the code paths so they are not counted as per-session growth.
for (let i = 0; i < vehicleKeys.length; i++) Session.fromJSON(jsonFor(i), key);

const store = new MemorySessionStore<Session>(2 * n + 1);
const fill = (from: number): void => {
  // The JSON inputs are transient garbage; only what the store keeps survives the GC.
  for (let i = from; i < from + n; i++) {
    const j = jsonFor(i);
    store.set(j.vin, Domain.INFOTAINMENT, Session.fromJSON(j, key));
  }
  gc();
  gc();
};
gc();
gc();
const before = process.memoryUsage();
fill(0);
const after = process.memoryUsage();
// A second batch: the slope between n and 2n sessions is the marginal cost of one more
// session. The first figure (the definition) also carries one-time process growth
// — mostly the young generation reaching its working size, tens of MB — divided by n.
fill(n);
const after2 = process.memoryUsage();
const out = {
  sessions: n,
  rss_bytes_per_session: Math.round((after.rss - before.rss) / n),
  rss_marginal_bytes_per_session: Math.round((after2.rss - after.rss) / n),
  heap_bytes_per_session: Math.round((after.heapUsed - before.heapUsed) / n),
  // `external` already includes `arrayBuffers` (node's memoryUsage docs): adding both counted the slabs twice.
  external_bytes_per_session: Math.round((after.external - before.external) / n),
};
process.stdout.write(JSON.stringify(out) + '\n');
