/**
 * `npm run bench [-- --quick] [-- --profile]` — how much the signing proxy costs per call,
 * measured against a plain pass-through in the same run, on loopback only.
 *
 * Set-up (each server in its own node process, running compiled JavaScript as the
 * container image does — see bench/common.ts; autocannon runs in this one):
 *   simulator  bench/sim-server.ts — zero-latency mode (limits off, wake delays ÷ 1e6),
 *              1,100 synthetic online vehicles (100 "warm" + 1,000 for the cold path), two
 *              keys enrolled (the proxy's, and the baseline client's own), and a request
 *              counter at the simulator so upstream calls are counted where they arrive.
 *   proxy      bench/proxy-server.ts — `startProxy` with the real config, `--upstream` = sim.
 *   baseline   bench/baseline-server.ts — node:http + undici `Pool` pass-through, no signing.
 *
 * What a fair baseline is: both paths must make the simulator do the SAME work per request,
 * otherwise the ratio measures the simulator, not the proxy. Through the proxy, a client
 * sends `POST /api/1/vehicles/{vin}/command/flash_lights` and the proxy signs, sends
 * `signed_command`, and authenticates/decrypts the vehicle's answer. Through the baseline,
 * the client sends `POST /api/1/vehicles/{vin}/signed_command` with a command this driver
 * signed BEFORE the run (own key, own session per VIN, fresh counters, encrypted answers
 * requested), which the pass-through forwards untouched. So the simulator verifies and
 * executes one genuine flash_lights per request in both cases (the driver checks the
 * simulator's executed count after each run); the difference is exactly the proxy's own
 * work: JSON body → plan → HMAC sign → base64 → upstream → base64 → AES-GCM open → answer.
 * Requests rotate over the 100 warm VINs (autocannon `setupRequest`, one global sequence).
 *
 * Figures: autocannon at 1/16/128 connections for proxy and baseline (req/s, p50/p99 ms);
 * their ratio; the CPU time the proxy / baseline process spent per request (from /proc);
 * added p50 at 1 connection = proxy p50 − direct-to-simulator p50, measured with sequential
 * requests on one keep-alive connection and a µs clock (autocannon rounds latencies to whole
 * ms), after 1,000 warm-up requests per target, in 15 interleaved rounds; the cold path
 * (first command to 1,000 new VINs, 16 at a time: time, upstream calls and handshakes per
 * (VIN, domain) counted at the simulator); bytes per cached session (bench/memory.ts,
 * 100,000 synthetic sessions, --expose-gc, RSS delta / n, and the RSS of each further
 * session over a second 100,000); the simulator's own verification rate (in-process:
 * decode, verify, execute, seal).
 * Prints a table and, last, one JSON line with all figures.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir, cpus } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import autocannon from 'autocannon';
import { Client } from 'undici';
import { generateKeyPair, loadKeyFromPem, type LocalKey } from '../src/keys/index.js';
import { planCommand } from '../src/commands/index.js';
import { Session, buildSessionInfoRequest, openSessionInfoResponse } from '../src/crypto/session.js';
import { Domain } from '../src/protocol/domains.js';
import { fromBase64, toBase64 } from '../src/protocol/routable.js';
import { Sim } from '../src/sim/index.js';
import { BENCH_TOKEN, ROOT, benchFleet, benchVin, buildForBench, compiled, percentile, round, startChild, type ChildHandle } from './common.js';

const args = new Set(process.argv.slice(2));
const QUICK = args.has('--quick');
const PROFILE = args.has('--profile');
const WARM_VINS = 100;
const COLD_VINS = QUICK ? 200 : 1000;
const DURATION_S = QUICK ? 1 : 9;
const SEGMENTS = QUICK ? 1 : 3;
const WARMUP_S = QUICK ? 0.5 : 2;
const C1_SAMPLES = QUICK ? 300 : 3000;
const C1_WARMUP = QUICK ? 100 : 1000;
const C1_ROUNDS = QUICK ? 1 : 15;
// 100,000 even in --quick: at fewer sessions the RSS delta is dominated by heap growth steps.
const MEMORY_SESSIONS = 100_000;
const VERIFY_COMMANDS = QUICK ? 3_000 : 20_000;
const LEVELS = [1, 16, 128] as const;

const flashLights = (() => {
  const p = planCommand('flash_lights', {});
  if (!p.ok || p.plan.kind !== 'signed') throw new Error('flash_lights is expected to be a signed infotainment command');
  return p.plan;
})();
const HEADERS = { authorization: `Bearer ${BENCH_TOKEN}`, 'content-type': 'application/json' };

interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  total: number;
}

async function load(url: string, connections: number, seconds: number, next: () => { path: string; body: string }): Promise<LoadResult> {
  const r = await autocannon({
    url,
    connections,
    duration: seconds,
    method: 'POST',
    headers: HEADERS,
    requests: [
      {
        setupRequest: (req: Record<string, unknown>) => {
          const n = next();
          return { ...req, path: n.path, body: n.body };
        },
      },
    ],
  });
  return {
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
    total: r.requests.total,
  };
}

function combine(parts: LoadResult[]): LoadResult {
  const median = (xs: number[]): number => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  return {
    rps: parts.reduce((a, p) => a + p.rps, 0) / parts.length,
    p50: median(parts.map((p) => p.p50)),
    p99: median(parts.map((p) => p.p99)),
    non2xx: parts.reduce((a, p) => a + p.non2xx, 0),
    errors: parts.reduce((a, p) => a + p.errors, 0),
    total: parts.reduce((a, p) => a + p.total, 0),
  };
}

/** Sequential requests on one keep-alive connection; latencies in ms with µs resolution. */
async function sequential(url: string, n: number, next: () => { path: string; body: string }): Promise<{ times: number[]; bad: number }> {
  const client = new Client(url, { pipelining: 1 });
  const times: number[] = [];
  let bad = 0;
  try {
    for (let i = 0; i < n; i++) {
      const { path, body } = next();
      const t0 = process.hrtime.bigint();
      const res = await client.request({ method: 'POST', path, headers: HEADERS, body });
      await res.body.arrayBuffer();
      times.push(Number(process.hrtime.bigint() - t0) / 1e6);
      if (res.statusCode !== 200) bad++;
    }
  } finally {
    await client.close();
  }
  return { times, bad };
}

function summary(times: number[]): { p50: number; p99: number } {
  const sorted = times.slice().sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
}

async function post(url: string, path: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(url + path, { method: 'POST', headers: HEADERS, body: JSON.stringify(body) });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

/** Handshakes the baseline client's own infotainment session with one vehicle. */
async function clientSession(simUrl: string, key: LocalKey, vin: string): Promise<Session> {
  const built = buildSessionInfoRequest({ domain: Domain.INFOTAINMENT, publicKey: key.publicKey, random: (n) => crypto.getRandomValues(new Uint8Array(n)) });
  const r = await post(simUrl, `/api/1/vehicles/${vin}/signed_command`, { routable_message: toBase64(built.bytes) });
  const answer = openSessionInfoResponse(fromBase64(String(r.json.response)), built);
  if (answer.kind !== 'session_info') throw new Error(`handshake with ${vin} failed: ${answer.kind}`);
  return Session.fromHandshake({ key, vin, domain: Domain.INFOTAINMENT, challenge: built.uuid, ...answer, now: Date.now() });
}

/**
 * `count` pre-signed flash_lights bodies in global order: request i goes to VIN i % 100
 * with that VIN's next counter, so concurrent requests stay within the vehicle's window.
 */
function presign(sessions: Session[], count: number): Array<{ path: string; body: string }> {
  const out: Array<{ path: string; body: string }> = [];
  const random = (n: number): Uint8Array => crypto.getRandomValues(new Uint8Array(n));
  const now = Date.now();
  for (let i = 0; i < count; i++) {
    const s = sessions[i % sessions.length]!;
    const signed = s.signCommand(flashLights.payload, { expiresInSec: 30, now, random });
    out.push({ path: `/api/1/vehicles/${s.vin}/signed_command`, body: JSON.stringify({ routable_message: toBase64(signed.bytes) }) });
  }
  return out;
}

function rotating<T>(items: T[]): () => T {
  let i = 0;
  return () => items[i++ % items.length]!;
}

interface SimStats {
  requests: number;
  executed: number;
  faults: number;
  handshakes: number;
  pairs: number;
  maxPerPair: number;
}

function simVerifyRate(): { perSecond: number; verified: number } {
  const key = loadKeyFromPem(generateKeyPair().privatePem);
  const vin = benchVin(0);
  const sim = new Sim({ fleet: benchFleet(1), enroll: [{ publicKey: key.publicKey }], limits: false, maxLogEntries: 1000 });
  const vehicle = sim.vehicle(vin);
  const random = (n: number): Uint8Array => crypto.getRandomValues(new Uint8Array(n));
  const built = buildSessionInfoRequest({ domain: Domain.INFOTAINMENT, publicKey: key.publicKey, random });
  const answer = openSessionInfoResponse(vehicle.handleRoutable(built.bytes)!, built);
  if (answer.kind !== 'session_info') throw new Error('in-process handshake failed');
  const session = Session.fromHandshake({ key, vin, domain: Domain.INFOTAINMENT, challenge: built.uuid, ...answer, now: Date.now() });
  const now = Date.now();
  const msgs = Array.from({ length: VERIFY_COMMANDS }, () => session.signCommand(flashLights.payload, { expiresInSec: 60, now, random }).bytes);
  for (let i = 0; i < 500; i++) vehicle.handleRoutable(msgs[i]!); // warm-up (JIT)
  const t0 = process.hrtime.bigint();
  for (let i = 500; i < msgs.length; i++) vehicle.handleRoutable(msgs[i]!);
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const verified = msgs.length - 500;
  const executed = sim.log().filter((e) => e.event === 'command' && e.executed).length;
  sim.close();
  if (executed < Math.min(verified, 900)) throw new Error(`the simulator executed only ${executed} of ${verified} pre-signed commands`);
  return { perSecond: verified / seconds, verified };
}

/**
 * CPU time (user + system, ms) a child process has used so far, from /proc/<pid>/stat (10 ms
 * ticks: over a 3 s segment of thousands of requests that is fine-grained enough). NaN where
 * /proc is missing; the report then shows n/a. The CPU each request costs the server is the
 * steadier figure on a shared machine: it does not move with what else competes for the
 * CPUs, which the req/s ratio does.
 */
function cpuMs(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return NaN;
  }
}

function fmt(n: number, d = 0): string {
  return Number.isFinite(n) ? n.toFixed(d) : 'n/a';
}

async function main(): Promise<void> {
  const started = Date.now();
  buildForBench();
  const dir = mkdtempSync(join(tmpdir(), 'vcp-bench-'));
  const children: ChildHandle[] = [];
  try {
    const proxyPair = generateKeyPair();
    const keyFile = join(dir, 'command-key.pem');
    writeFileSync(keyFile, proxyPair.privatePem, { mode: 0o600 });
    const proxyKey = loadKeyFromPem(proxyPair.privatePem);
    const clientKey = loadKeyFromPem(generateKeyPair().privatePem);
    const hex = (k: LocalKey): string => Buffer.from(k.publicKey).toString('hex');

    const sim = await startChild('sim-server.ts', [String(WARM_VINS + COLD_VINS), hex(proxyKey), hex(clientKey)]);
    children.push(sim.handle);
    const simUrl = String(sim.ready.url);
    const profileDir = join(ROOT, 'bench', 'profiles');
    if (PROFILE) mkdirSync(profileDir, { recursive: true });
    const proxy = await startChild('proxy-server.ts', [keyFile, simUrl], PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []);
    children.push(proxy.handle);
    const proxyUrl = String(proxy.ready.url);
    const base = await startChild('baseline-server.ts', [simUrl]);
    children.push(base.handle);
    const baseUrl = String(base.ready.url);
    const stats = (): Promise<SimStats> => sim.handle.call<SimStats>({ cmd: 'stats' });
    const resetSim = (): Promise<unknown> => sim.handle.call({ cmd: 'reset' });

    // --- warm the 100 VINs: one proxy session each, one baseline-client session each ---
    const warm = Array.from({ length: WARM_VINS }, (_, i) => benchVin(i));
    for (const vin of warm) {
      const r = await post(proxyUrl, `/api/1/vehicles/${vin}/command/flash_lights`, {});
      if (r.status !== 200) throw new Error(`warm-up through the proxy failed for ${vin}: ${r.status} ${JSON.stringify(r.json)}`);
    }
    const sessions: Session[] = [];
    for (const vin of warm) sessions.push(await clientSession(simUrl, clientKey, vin));
    const proxyNext = (() => {
      let i = 0;
      return () => ({ path: `/api/1/vehicles/${warm[i++ % WARM_VINS]}/command/flash_lights`, body: '{}' });
    })();

    // --- added latency at 1 connection (µs clock), the three targets interleaved ---
    // Each target first gets C1_WARMUP unmeasured requests (JIT-compiled hot paths in all
    // three processes alike), then short rounds alternate direct / baseline / proxy so that
    // a change in the machine's load during the phase hits all three alike.
    await resetSim();
    const seqTimes = { direct: [] as number[], base: [] as number[], proxy: [] as number[] };
    let seqBad = 0;
    {
      const d = await sequential(simUrl, C1_WARMUP, rotating(presign(sessions, C1_WARMUP)));
      const b = await sequential(baseUrl, C1_WARMUP, rotating(presign(sessions, C1_WARMUP)));
      const p = await sequential(proxyUrl, C1_WARMUP, proxyNext);
      seqBad += d.bad + b.bad + p.bad;
    }
    for (let round = 0; round < C1_ROUNDS; round++) {
      const n = Math.ceil(C1_SAMPLES / C1_ROUNDS);
      const d = await sequential(simUrl, n, rotating(presign(sessions, n)));
      const b = await sequential(baseUrl, n, rotating(presign(sessions, n)));
      const p = await sequential(proxyUrl, n, proxyNext);
      seqTimes.direct.push(...d.times);
      seqTimes.base.push(...b.times);
      seqTimes.proxy.push(...p.times);
      seqBad += d.bad + b.bad + p.bad;
    }
    const direct1 = summary(seqTimes.direct);
    const base1 = summary(seqTimes.base);
    const proxy1 = summary(seqTimes.proxy);
    const seqStats = await stats();
    if (seqBad > 0 || seqStats.faults > 0) {
      throw new Error(`sequential phase had failures (${seqBad} non-200 answers, vehicle faults ${seqStats.faults})`);
    }

    // --- throughput at 1/16/128 connections ---
    // Proxy and baseline alternate in short segments so that load from anything else on the
    // machine hits both alike; figures are the sums (req/s) and medians (latency) over segments.
    const rows: Array<{
      c: number;
      proxy: LoadResult;
      base: LoadResult;
      proxyExecuted: number;
      baseExecuted: number;
      baseFaults: number;
      proxyCpuUs: number;
      baseCpuUs: number;
    }> = [];
    const proxyPid = proxy.handle.child.pid;
    const basePid = base.handle.child.pid;
    for (const c of LEVELS) {
      await load(proxyUrl, c, WARMUP_S, proxyNext);
      await load(baseUrl, c, WARMUP_S, rotating(presign(sessions, Math.ceil(WARMUP_S * 9000))));
      const ps: LoadResult[] = [];
      const bs: LoadResult[] = [];
      let proxyExecuted = 0;
      let baseExecuted = 0;
      let baseFaults = 0;
      let proxyCpu = 0;
      let baseCpu = 0;
      for (let seg = 0; seg < SEGMENTS; seg++) {
        await resetSim();
        const p0 = cpuMs(proxyPid);
        ps.push(await load(proxyUrl, c, DURATION_S / SEGMENTS, proxyNext));
        proxyCpu += cpuMs(proxyPid) - p0;
        proxyExecuted += (await stats()).executed;
        // Signed just before use: 30 s lifetimes, as the proxy signs (a vehicle refuses
        // out-of-order commands that live longer than 30 s).
        const nextBase = rotating(presign(sessions, Math.ceil((DURATION_S / SEGMENTS) * 9000)));
        await resetSim();
        const b0 = cpuMs(basePid);
        bs.push(await load(baseUrl, c, DURATION_S / SEGMENTS, nextBase));
        baseCpu += cpuMs(basePid) - b0;
        const st = await stats();
        baseExecuted += st.executed;
        baseFaults += st.faults;
      }
      const proxyAll = combine(ps);
      const baseAll = combine(bs);
      rows.push({
        c,
        proxy: proxyAll,
        base: baseAll,
        proxyExecuted,
        baseExecuted,
        baseFaults,
        proxyCpuUs: (proxyCpu * 1000) / Math.max(1, proxyAll.total),
        baseCpuUs: (baseCpu * 1000) / Math.max(1, baseAll.total),
      });
    }

    // --- cold path: first command to new VINs, 16 at a time ---
    await new Promise((r) => setTimeout(r, 500)); // let the last load run's stragglers land
    await resetSim();
    const cold = Array.from({ length: COLD_VINS }, (_, i) => benchVin(WARM_VINS + i));
    const coldTimes: number[] = [];
    let coldFailures = 0;
    const t0 = process.hrtime.bigint();
    let nextCold = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        const client = new Client(proxyUrl);
        try {
          while (nextCold < cold.length) {
            const vin = cold[nextCold++]!;
            const s = process.hrtime.bigint();
            const res = await client.request({ method: 'POST', path: `/api/1/vehicles/${vin}/command/flash_lights`, headers: HEADERS, body: '{}' });
            await res.body.arrayBuffer();
            coldTimes.push(Number(process.hrtime.bigint() - s) / 1e6);
            if (res.statusCode !== 200) coldFailures++;
          }
        } finally {
          await client.close();
        }
      }),
    );
    const coldSeconds = Number(process.hrtime.bigint() - t0) / 1e9;
    const coldStats = await sim.handle.call<SimStats & { requestsForVins: number }>({ cmd: 'stats', vins: cold });
    coldTimes.sort((a, b) => a - b);

    // --- memory per cached session (separate process, --expose-gc) ---
    const memOut = execFileSync(process.execPath, ['--expose-gc', compiled('memory.ts'), String(MEMORY_SESSIONS)], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    const mem = JSON.parse(memOut.trim().split('\n').pop()!) as {
      rss_bytes_per_session: number;
      rss_marginal_bytes_per_session: number;
      heap_bytes_per_session: number;
      external_bytes_per_session: number;
    };

    for (const h of children.splice(0)) await h.stop();

    // --- the simulator's own verification rate (in this process, servers stopped) ---
    const verify = simVerifyRate();

    // --- report ---
    const byC = new Map(rows.map((r) => [r.c, r]));
    const ratio = (c: number): number => round(byC.get(c)!.proxy.rps / byC.get(c)!.base.rps, 3);
    const figures = {
      ratio_c1: ratio(1),
      ratio_c16: ratio(16),
      ratio_c128: ratio(128),
      proxy_rps_c16: Math.round(byC.get(16)!.proxy.rps),
      baseline_rps_c16: Math.round(byC.get(16)!.base.rps),
      proxy_rps_c128: Math.round(byC.get(128)!.proxy.rps),
      baseline_rps_c128: Math.round(byC.get(128)!.base.rps),
      proxy_cpu_us_per_req_c16: Math.round(byC.get(16)!.proxyCpuUs),
      baseline_cpu_us_per_req_c16: Math.round(byC.get(16)!.baseCpuUs),
      proxy_cpu_us_per_req_c128: Math.round(byC.get(128)!.proxyCpuUs),
      baseline_cpu_us_per_req_c128: Math.round(byC.get(128)!.baseCpuUs),
      added_p50_ms_c1: round(proxy1.p50 - direct1.p50, 3),
      baseline_added_p50_ms_c1: round(base1.p50 - direct1.p50, 3),
      cold_seconds: round(coldSeconds, 2),
      cold_p50_ms: round(percentile(coldTimes, 50), 2),
      cold_upstream_calls_per_vin: round(coldStats.requestsForVins / COLD_VINS, 3),
      handshakes_per_pair: round(coldStats.handshakes / Math.max(1, coldStats.pairs), 3),
      handshakes_max_per_pair: coldStats.maxPerPair,
      bytes_per_session: mem.rss_bytes_per_session,
      marginal_bytes_per_session: mem.rss_marginal_bytes_per_session,
      heap_bytes_per_session: mem.heap_bytes_per_session,
      sim_verify_per_s: Math.round(verify.perSecond),
      quick: QUICK,
    };

    const lines: string[] = [];
    lines.push(`vehicle-command-proxy bench${QUICK ? ' (--quick)' : ''}: ${cpus().length} CPUs, node ${process.version}, ${DURATION_S}s per level and target in ${SEGMENTS} alternating segments`);
    lines.push('');
    lines.push('conns | proxy req/s  p50  p99 | baseline req/s  p50  p99 | ratio | CPU µs/req proxy/baseline | executed proxy/baseline | non-2xx/errors');
    for (const r of rows) {
      lines.push(
        `${String(r.c).padStart(5)} | ${fmt(r.proxy.rps).padStart(11)} ${fmt(r.proxy.p50).padStart(4)} ${fmt(r.proxy.p99).padStart(4)} | ` +
          `${fmt(r.base.rps).padStart(14)} ${fmt(r.base.p50).padStart(4)} ${fmt(r.base.p99).padStart(4)} | ${fmt(r.proxy.rps / r.base.rps, 3).padStart(5)} | ` +
          `${`${fmt(r.proxyCpuUs)}/${fmt(r.baseCpuUs)}`.padStart(25)} | ` +
          `${r.proxyExecuted}/${r.proxy.total} ${r.baseExecuted}/${r.base.total} (${r.baseFaults} refused) | ${r.proxy.non2xx + r.proxy.errors}/${r.base.non2xx + r.base.errors}`,
      );
    }
    lines.push('');
    lines.push(`1 connection, sequential (µs clock): direct p50 ${fmt(direct1.p50, 3)} ms, baseline ${fmt(base1.p50, 3)} ms, proxy ${fmt(proxy1.p50, 3)} ms (p99 ${fmt(proxy1.p99, 3)}) → added ${fmt(proxy1.p50 - direct1.p50, 3)} ms`);
    lines.push(
      `cold path: ${COLD_VINS} new VINs in ${fmt(coldSeconds, 2)} s (p50 ${fmt(percentile(coldTimes, 50), 2)} ms, failures ${coldFailures}); ` +
        `${coldStats.requestsForVins} upstream calls, ${coldStats.handshakes} handshakes over ${coldStats.pairs} (VIN, domain) pairs, max ${coldStats.maxPerPair} per pair`,
    );
    lines.push(
      `memory: ${mem.rss_bytes_per_session} B RSS per cached session over the first ${MEMORY_SESSIONS} (heap ${mem.heap_bytes_per_session} B, external ${mem.external_bytes_per_session} B); ` +
        `${mem.rss_marginal_bytes_per_session} B each for the next ${MEMORY_SESSIONS}`,
    );
    lines.push(`simulator: ${fmt(verify.perSecond)} signed commands verified+executed per second (in-process, ${verify.verified} commands)`);
    lines.push(`targets: ratio ≥ 0.6 at 16/128, added p50 ≤ 0.3 ms, handshakes per pair = 1, ≤ 1024 B per session, sim ≥ 5000/s; total ${fmt((Date.now() - started) / 1000, 0)} s`);
    // Figures from a run in which requests failed measure the failures, not the proxy; and
    // `--quick` is CI's smoke test of the whole set-up (.ci/run), so any failure fails it.
    const failed =
      coldFailures + rows.reduce((a, r) => a + r.proxy.non2xx + r.proxy.errors + r.base.non2xx + r.base.errors + r.baseFaults, 0);
    if (failed > 0) {
      lines.push(`FAILED: ${failed} requests failed (cold path ${coldFailures}); see the table`);
      process.exitCode = 1;
    }
    process.stdout.write(lines.join('\n') + '\n');
    process.stdout.write(JSON.stringify(figures) + '\n');
  } finally {
    for (const h of children) await h.stop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
