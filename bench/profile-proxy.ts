/**
 * `npx tsx bench/profile-proxy.ts [connections] [seconds]` — CPU profile of the proxy alone
 * (no baseline, no other phases): starts the simulator and the proxy (with --cpu-prof into
 * bench/profiles/), warms 100 VINs, drives only the proxy, stops. Summarise the
 * .cpuprofile with any viewer (self time by function/package).
 */
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { generateKeyPair, loadKeyFromPem } from '../src/keys/index.js';
import { BENCH_TOKEN, ROOT, benchVin, buildForBench, startChild } from './common.js';

const conns = Number(process.argv[2] ?? 16);
const seconds = Number(process.argv[3] ?? 5);
buildForBench();
const HEADERS = { authorization: `Bearer ${BENCH_TOKEN}`, 'content-type': 'application/json' };
const dir = mkdtempSync(join(tmpdir(), 'vcp-prof-'));
const pair = generateKeyPair();
const keyFile = join(dir, 'k.pem');
writeFileSync(keyFile, pair.privatePem, { mode: 0o600 });
const hex = Buffer.from(loadKeyFromPem(pair.privatePem).publicKey).toString('hex');
const other = Buffer.from(loadKeyFromPem(generateKeyPair().privatePem).publicKey).toString('hex');
const sim = await startChild('sim-server.ts', ['100', hex, other]);
const profileDir = join(ROOT, 'bench', 'profiles');
mkdirSync(profileDir, { recursive: true });
const proxy = await startChild('proxy-server.ts', [keyFile, String(sim.ready.url)], ['--cpu-prof', `--cpu-prof-dir=${profileDir}`]);
const url = String(proxy.ready.url);
const warm = Array.from({ length: 100 }, (_, i) => benchVin(i));
for (const vin of warm) {
  const r = await fetch(`${url}/api/1/vehicles/${vin}/command/flash_lights`, { method: 'POST', headers: HEADERS, body: '{}' });
  if (r.status !== 200) throw new Error(`warm-up failed: ${r.status}`);
  await r.arrayBuffer();
}
let i = 0;
const r = await autocannon({
  url,
  connections: conns,
  duration: seconds,
  method: 'POST',
  headers: HEADERS,
  requests: [{ setupRequest: (req: Record<string, unknown>) => ({ ...req, path: `/api/1/vehicles/${warm[i++ % 100]}/command/flash_lights`, body: '{}' }) }],
});
console.log(`c${conns}: ${r.requests.average} req/s, p50 ${r.latency.p50} ms, non2xx ${r.non2xx}, errors ${r.errors}`);
await proxy.handle.call({ cmd: 'stop' }).catch(() => undefined);
await new Promise((res) => setTimeout(res, 1000));
await sim.handle.call({ cmd: 'stop' }).catch(() => undefined);
rmSync(dir, { recursive: true, force: true });
process.exit(0);
