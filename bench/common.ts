/**
 * Shared pieces of the benchmark (bench/run.ts and its child processes): the synthetic
 * fleet, the child-process protocol, and small statistics helpers.
 *
 * Each server under test (simulator, proxy, baseline pass-through) runs in its OWN node
 * process so that the load generator (autocannon, in the driver process) does not share an
 * event loop with it; on a 2-core machine they still share CPUs, equally for proxy and
 * baseline, which is why the figures we compare are ratios measured in the same run.
 *
 * The children run COMPILED JavaScript (`buildForBench` → bench/.build), as the container
 * image does (`node dist/cli.js`), not the TypeScript sources under tsx: tsx's transform
 * (esbuild keepNames) wraps every closure created per request in a `__name` call, a cost the
 * shipped proxy does not pay. Proxy, baseline and simulator are compiled alike.
 */
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { VehicleSpec } from '../src/sim/types.js';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Where `buildForBench` writes src/ and bench/ as JavaScript. */
export const BUILD_DIR = join(ROOT, 'bench', '.build');

/**
 * Compiles src/ and bench/*.ts into bench/.build (tsconfig.bench.json) and copies the
 * generated protobuf module next to them: about a second, so every run measures the
 * current sources.
 */
export function buildForBench(): void {
  execFileSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(ROOT, 'tsconfig.bench.json')], { cwd: ROOT, stdio: 'inherit' });
  execFileSync(process.execPath, [join(ROOT, 'scripts', 'copy-generated.mjs'), join(BUILD_DIR, 'src', 'protocol', 'gen')], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
}

/** The compiled form of `bench/<script>.ts` (after `buildForBench`). */
export function compiled(script: string): string {
  return join(BUILD_DIR, 'bench', script.replace(/\.ts$/, '.js'));
}

/** Synthetic VIN number `i`: valid VIN alphabet (no I, O, Q), 17 characters. */
export function benchVin(i: number): string {
  return `5YJ3BENCH${String(i).padStart(8, '0')}`;
}

/** Modern, online cars that honour FLAG_ENCRYPT_RESPONSE (the proxy's normal path). */
export function benchFleet(n: number): { vehicles: VehicleSpec[] } {
  const vehicles: VehicleSpec[] = [];
  for (let i = 0; i < n; i++) {
    vehicles.push({ vin: benchVin(i), model: '3', year: 2023, firmware: '2024.44.25', state: 'online', display_name: `Bench ${i}` });
  }
  return { vehicles };
}

export interface ChildHandle {
  child: ChildProcess;
  /** Sends a message and waits for the reply with the same id. */
  call<T = unknown>(msg: Record<string, unknown>): Promise<T>;
  stop(): Promise<void>;
}

interface Reply {
  id?: number;
  ready?: boolean;
  error?: string;
  [k: string]: unknown;
}

/**
 * Forks the compiled `bench/<script>` (see `buildForBench`) with an IPC channel. The child
 * sends `{ready: true, ...}` once listening; later messages `{id, ...}` answer `call`s.
 * `execArgv` adds node flags (e.g. --cpu-prof).
 */
export async function startChild(script: string, args: string[], execArgv: string[] = []): Promise<{ handle: ChildHandle; ready: Reply }> {
  const child = fork(compiled(script), args, { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let nextId = 1;
  const waiting = new Map<number, (r: Reply) => void>();
  const ready = await new Promise<Reply>((resolve, reject) => {
    const onExit = (code: number | null): void => reject(new Error(`${script} exited (${code}) before it was ready`));
    child.once('exit', onExit);
    child.on('message', (m: Reply) => {
      if (m.ready) {
        child.off('exit', onExit);
        resolve(m);
        return;
      }
      if (m.id !== undefined) {
        const w = waiting.get(m.id);
        waiting.delete(m.id);
        w?.(m);
      }
    });
  });
  const handle: ChildHandle = {
    child,
    call: <T>(msg: Record<string, unknown>) =>
      new Promise<T>((resolve, reject) => {
        const id = nextId++;
        waiting.set(id, (r) => (r.error ? reject(new Error(r.error)) : resolve(r as T)));
        child.send({ ...msg, id });
      }),
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
        child.once('exit', () => {
          clearTimeout(t);
          resolve();
        });
        child.send({ cmd: 'stop' });
      }),
  };
  return { handle, ready };
}

/** Child side: announce readiness and answer `call`s. */
export function serveParent(ready: Record<string, unknown>, handler: (msg: Record<string, unknown>) => Promise<Record<string, unknown>> | Record<string, unknown>): void {
  process.on('message', (m: Record<string, unknown>) => {
    void (async () => {
      try {
        const out = await handler(m);
        process.send?.({ ...out, id: m.id });
      } catch (e) {
        process.send?.({ id: m.id, error: (e as Error).message });
      }
    })();
  });
  process.send?.({ ready: true, ...ready });
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

export const round = (x: number, digits = 2): number => {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
};

/** A bearer token shaped like a JWT (the simulator accepts any non-empty token). */
export const BENCH_TOKEN = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from('{"sub":"bench","aud":"https://fleet-api.bench.invalid"}').toString('base64url')}.c2ln`;
