/**
 * `vcproxy sim` and `vcproxy sandbox` as processes: flags, the banner, and a clean exit on
 * SIGINT (Ctrl-C). Ports are 0 (ephemeral) and the listeners bind 127.0.0.1.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { parseSimArgs, run as runSim } from '../../src/cli/sim.js';
import { run as runSandbox } from '../../src/cli/sandbox.js';
import { generateKeyPair } from '../../src/keys/index.js';

const ROOT = join(import.meta.dirname, '..', '..');

/** Starts `vcproxy <args>` under tsx; resolves once `ready` matches stdout. */
function start(args: string[], ready: RegExp) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const started = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not ready: ${out} ${err}`)), 15_000);
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (ready.test(out)) {
        clearTimeout(timer);
        resolve(out);
      }
    });
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    void exited.then((code) => reject(new Error(`exited ${code}: ${err}`)));
  });
  return { child, started, exited, output: () => out };
}

describe('vcproxy sim flags', () => {
  test('parses --port/--host/--fleet/--enroll PEM:role/--time-scale/--no-limits', () => {
    const dir = mkdtempSync(join(tmpdir(), 'vcp-sim-cli-'));
    const pem = join(dir, 'driver.pem');
    writeFileSync(pem, generateKeyPair().publicPem);
    const fleet = join(dir, 'fleet.yaml');
    writeFileSync(fleet, 'vehicles:\n  - vin: 5YJ3E1EA8MF000555\n    state: asleep\n');
    const o = parseSimArgs(['--port', '0', '--host', '127.0.0.1', '--fleet', fleet, '--enroll', `${pem}:driver`, '--enroll', pem, '--time-scale', '50', '--no-limits']);
    if (o === 'help') throw new Error('unexpected help');
    expect(o).toMatchObject({ port: 0, host: '127.0.0.1', timeScale: 50, limits: false });
    expect(o.enroll?.map((e) => e.role)).toEqual(['driver', 'owner']);
    expect(o.fleet?.vehicles[0]?.vin).toBe('5YJ3E1EA8MF000555');
    expect(parseSimArgs(['--help'])).toBe('help');
    expect(() => parseSimArgs(['--port', '70000'])).toThrow(/--port/);
    expect(() => parseSimArgs(['--time-scale', '0'])).toThrow(/time-scale/);
    expect(() => parseSimArgs(['--bogus'])).toThrow(/bogus/);
    expect(() => parseSimArgs(['--enroll', join(dir, 'missing.pem')])).toThrow(/cannot read/);
  });
});

describe('processes', () => {
  test('vcproxy sim serves and exits 0 on SIGINT', async () => {
    const p = start(['sim', '--port', '0', '--no-limits', '--log-level', 'silent'], /Fleet sandbox on (http:\/\/\S+)/);
    const out = await p.started;
    const url = /Fleet sandbox on (http:\/\/\S+)/.exec(out)![1]!;
    expect(await (await fetch(`${url}/status`)).text()).toBe('ok');
    p.child.kill('SIGINT');
    expect(await p.exited).toBe(0);
  });

  test('vcproxy sandbox prints the proxy URL, a token and two curl lines; exits 0 on SIGINT', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'vcp-sbx-cli-')), '.sandbox');
    const p = start(['sandbox', '--port', '0', '--sim-port', '0', '--dir', dir, '--log-level', 'silent'], /Press Ctrl-C/);
    const out = await p.started;
    const curls = out.split('\n').filter((l) => l.startsWith('curl '));
    expect(curls).toHaveLength(2);
    expect(curls[0]).toMatch(/command\/door_lock$/);
    expect(curls[1]).toMatch(/vehicle_data$/);
    expect(out).toMatch(/token\s+\S+\.\S+\.\S+/);
    p.child.kill('SIGINT');
    expect(await p.exited).toBe(0);
  });
});

/**
 * In process: runs a subcommand with stdout captured and checks that, at the moment the
 * banner is written, the subcommand's own SIGINT handler is already installed — whoever
 * reads the banner may send Ctrl-C at once, and with no handler Node's default action
 * would kill the process with 130. Then "presses Ctrl-C" by calling that handler, and
 * expects a clean exit code 0 with the handler removed. Deterministic: no timing involved.
 */
async function handlerBeforeBanner(run: (args: string[], env: NodeJS.ProcessEnv) => Promise<number>, args: string[], banner: RegExp) {
  const others = new Set(process.listeners('SIGINT'));
  const ours = (): Array<(...a: unknown[]) => void> => process.listeners('SIGINT').filter((l) => !others.has(l)) as never;
  const write = process.stdout.write;
  let installedAtBanner = -1;
  let out = '';
  let sawBanner!: () => void;
  const bannerSeen = new Promise<void>((r) => (sawBanner = r));
  process.stdout.write = ((chunk: string | Uint8Array): boolean => {
    out += String(chunk);
    if (installedAtBanner < 0 && banner.test(out)) {
      installedAtBanner = ours().length;
      sawBanner();
    }
    return true;
  }) as typeof process.stdout.write;
  try {
    const done = run(args, {});
    await Promise.race([bannerSeen, done.then((code) => Promise.reject(new Error(`exited ${code} before the banner: ${out}`)))]);
    expect(installedAtBanner).toBe(1);
    ours()[0]!('SIGINT');
    expect(await done).toBe(0);
    expect(ours()).toHaveLength(0);
  } finally {
    process.stdout.write = write;
  }
}

describe('Ctrl-C right after the banner', () => {
  test('vcproxy sandbox installs its SIGINT handler before printing "Press Ctrl-C"', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'vcp-sbx-sig-')), '.sandbox');
    await handlerBeforeBanner(runSandbox, ['--port', '0', '--sim-port', '0', '--dir', dir, '--log-level', 'silent'], /Press Ctrl-C/);
  });
  test('vcproxy sim installs its SIGINT handler before printing its URL', async () => {
    await handlerBeforeBanner(runSim, ['--port', '0', '--no-limits', '--log-level', 'silent'], /Fleet sandbox on http/);
  });
});
