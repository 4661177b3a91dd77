/**
 * `vcproxy sandbox` smoke test: starts simulator + proxy on ephemeral ports with a fresh
 * key folder, then runs what the two printed curl lines do, via fetch.
 */
import { mkdtempSync, statSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { startSandbox, ensureSandboxKey, type RunningSandbox } from '../../src/cli/sandbox.js';

let sb: RunningSandbox | undefined;
afterAll(async () => {
  await sb?.close();
});

/** Turns one printed curl line into a fetch call (only the flags the banner uses). */
function curlToFetch(line: string): { url: string; init: RequestInit } {
  const headers: Record<string, string> = {};
  let method = 'GET';
  let body: string | undefined;
  const re = /-X (\S+)|-H '([^']*)'|-d '([^']*)'|(https?:\/\/\S+)/g;
  let url = '';
  for (let m = re.exec(line); m; m = re.exec(line)) {
    if (m[1]) method = m[1];
    else if (m[2]) {
      const i = m[2].indexOf(':');
      headers[m[2].slice(0, i).trim().toLowerCase()] = m[2].slice(i + 1).trim();
    } else if (m[3] !== undefined) body = m[3];
    else if (m[4]) url = m[4];
  }
  return { url, init: { method, headers, ...(body !== undefined ? { body } : {}) } };
}

test('the printed curl commands lock the car through the proxy and show "locked": true', async () => {
  const dir = join(mkdtempSync(join(tmpdir(), 'vcp-sandbox-')), '.sandbox');
  sb = await startSandbox({ port: 0, simPort: 0, dir });
  expect(statSync(sb.keyFile).mode & 0o777).toBe(0o600);
  expect(sb.curl.every((l) => !l.includes('\n'))).toBe(true);
  expect(sb.token.split('.')).toHaveLength(3);

  const before = curlToFetch(sb.curl[1]);
  const vd0 = (await (await fetch(before.url, before.init)).json()) as any;
  expect(vd0.response.vehicle_state.locked).toBe(false);

  const lock = curlToFetch(sb.curl[0]);
  expect(lock.url.startsWith(sb.proxyUrl)).toBe(true);
  const r = await fetch(lock.url, lock.init);
  expect(r.status).toBe(200);
  expect(await r.json()).toMatchObject({ response: { result: true } });

  const read = curlToFetch(sb.curl[1]);
  const vd = (await (await fetch(read.url, read.init)).json()) as any;
  expect(vd.response.vehicle_state.locked).toBe(true);

  // The lock went through the signed protocol: the simulator verified and executed it once.
  const log = (await (await fetch(`${sb.simUrl}/_sim/log`)).json()) as any;
  expect(log.response.filter((e: any) => e.executed && e.command === 'door_lock')).toHaveLength(1);
});

test('ensureSandboxKey never overwrites an existing key', () => {
  const dir = join(mkdtempSync(join(tmpdir(), 'vcp-sandbox-')), '.sandbox');
  const f1 = ensureSandboxKey(dir);
  const pem = readFileSync(f1, 'utf8');
  const f2 = ensureSandboxKey(dir);
  expect(f2).toBe(f1);
  expect(readFileSync(f2, 'utf8')).toBe(pem);
});
