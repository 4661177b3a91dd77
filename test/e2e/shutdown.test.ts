/**
 * `vcproxy serve` as a real process against the simulator: SIGTERM while a signed command
 * is in flight (the simulator holds its answer with `/_sim/delay_next`) lets the command
 * finish with its 200, then the process exits 0. Also SIGINT, and `/ready` on start-up.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadKeyFile } from '../../src/keys/index.js';
import { startSim, DEFAULT_FLEET_VINS, type RunningSim } from '../../src/sim/index.js';
import { exampleKeyFile, fakeJwt } from './proxy-fake-upstream.js';

const ROOT = resolve(import.meta.dirname, '../..');
const VIN: string = DEFAULT_FLEET_VINS.modern;
const AUTH = { authorization: `Bearer ${fakeJwt({ sub: 'shutdown-user' })}`, 'content-type': 'application/json' };

let keyFile: { path: string; cleanup(): Promise<void> };
let sim: RunningSim;
const children: ChildProcess[] = [];
beforeAll(async () => {
  keyFile = await exampleKeyFile();
  sim = await startSim({ port: 0, enroll: [{ publicKey: loadKeyFile(keyFile.path).publicKey, role: 'owner' }], timeScale: 1000, limits: false });
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await sim.close();
  await keyFile.cleanup();
});

interface Serve {
  child: ChildProcess;
  url: string;
  exited: Promise<number | null>;
  output(): string;
}

async function serve(extra: string[] = []): Promise<Serve> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'src/cli.ts', 'serve', '--key', keyFile.path, '--port', '0', '--upstream', sim.url, ...extra],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH } },
  );
  children.push(child);
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const url = await new Promise<string>((ok, fail) => {
    const look = (): void => {
      const m = /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(out);
      if (m) ok(m[1]!);
    };
    child.stdout!.on('data', look);
    void exited.then((code) => fail(new Error(`serve exited early (${code}): ${out}`)));
  });
  return { child, url, exited, output: () => out };
}

const executed = (): number => sim.sim.log({ vin: VIN }).filter((e) => e.event === 'command' && e.executed).length;

describe('graceful shutdown of vcproxy serve', () => {
  it('SIGTERM during an in-flight command lets it finish with 200, then exits 0', async () => {
    const s = await serve(['--shutdown-grace', '20s']);
    // /ready turns 200 once the start-up probe of the upstream succeeded (bounded poll).
    let ready = 0;
    for (let i = 0; i < 200 && ready !== 200; i++) {
      ready = (await fetch(`${s.url}/ready`)).status;
      if (ready !== 200) await new Promise((r) => setTimeout(r, 25));
    }
    expect(ready).toBe(200);
    // Establish the session first, so the held answer is the command's own.
    expect((await fetch(`${s.url}/api/1/vehicles/${VIN}/command/door_lock`, { method: 'POST', headers: AUTH })).status).toBe(200);

    await fetch(`${sim.url}/_sim/delay_next`, { method: 'POST', body: JSON.stringify({ vin: VIN, ms: 3000 }) });
    const before = executed();
    const answer = fetch(`${s.url}/api/1/vehicles/${VIN}/command/honk_horn`, { method: 'POST', headers: AUTH }).then(async (r) => ({
      status: r.status,
      body: await r.text(),
    }));
    // The simulator consumed the injection: it has the command and holds the answer, so
    // the command is in flight when the signal arrives.
    const pending = async (): Promise<number> =>
      Object.values(((await (await fetch(`${sim.url}/_sim/injections`)).json()) as { response: Record<string, unknown[]> }).response).flat()
        .length;
    let left = await pending();
    for (let i = 0; i < 400 && left > 0; i++) {
      await new Promise((r) => setTimeout(r, 5));
      left = await pending();
    }
    expect(left).toBe(0);
    expect(executed()).toBeLessThanOrEqual(before + 1);

    s.child.kill('SIGTERM');
    const got = await answer;
    expect(got.status, s.output()).toBe(200);
    expect(JSON.parse(got.body)).toEqual({ response: { result: true, reason: '' } });
    expect(await s.exited, s.output()).toBe(0);
    expect(s.output()).toContain('shutdown complete');
    expect(executed()).toBe(before + 1); // executed once, not resent
  }, 60_000);

  it('SIGINT with nothing in flight exits 0 at once', async () => {
    const s = await serve();
    s.child.kill('SIGINT');
    expect(await s.exited, s.output()).toBe(0);
  }, 60_000);
});
