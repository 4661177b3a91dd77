/**
 * The README stays true to the code: the two set-up commands come first, the configuration
 * table equals what CONFIG_OPTIONS generates, every error code the proxy can answer has a
 * troubleshooting row, every metric is documented, and the files it links exist.
 *
 * `UPDATE_README=1 npx vitest run test/e2e/readme.test.ts` rewrites the generated table.
 */
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startSandbox } from '../../src/cli/sandbox.js';
import { CONFIG_OPTIONS, configTableMarkdown } from '../../src/config.js';
import { createMetrics } from '../../src/ops/metrics.js';

const ROOT = resolve(import.meta.dirname, '../..');
const README_PATH = join(ROOT, 'README.md');
const readme = (): string => readFileSync(README_PATH, 'utf8');

function section(text: string, name: string): { start: number; end: number; body: string } {
  const open = new RegExp(`<!-- ${name}:start[^>]*-->\\n`).exec(text);
  const close = text.indexOf(`<!-- ${name}:end -->`);
  expect(open, `README lacks the <!-- ${name}:start --> marker`).not.toBeNull();
  expect(close).toBeGreaterThan(open!.index);
  const start = open!.index + open![0].length;
  return { start, end: close, body: text.slice(start, close) };
}

/**
 * Error codes the proxy can put in an HTTP answer: every literal `new VcpError('code'` in
 * the request path (HTTP layer, sessions, transport, protocol, crypto, command catalogue,
 * telemetry signing) plus every code of the vehicle fault table.
 */
function emittedCodes(): Set<string> {
  const files: string[] = [join(ROOT, 'src/keys/jws.ts')];
  const walk = (d: string): void => {
    for (const f of readdirSync(d)) {
      const p = join(d, f);
      if (statSync(p).isDirectory()) {
        if (f !== 'gen') walk(p);
      } else if (p.endsWith('.ts')) files.push(p);
    }
  };
  for (const d of ['http', 'session', 'transport', 'protocol', 'crypto', 'commands']) walk(join(ROOT, 'src', d));
  const codes = new Set<string>();
  for (const f of files) {
    const text = readFileSync(f, 'utf8');
    for (const m of text.matchAll(/new VcpError\(\s*'([a-z_]+)'/g)) codes.add(m[1]!);
    if (f.endsWith('faults.ts')) for (const m of text.matchAll(/\bcode: '([a-z_]+)'/g)) codes.add(m[1]!);
  }
  codes.delete('ok'); // the fault table's "no fault" row
  return codes;
}

describe('README', () => {
  it('opens with exactly the two set-up commands', () => {
    const first = readme().split('\n').slice(0, 8).join('\n');
    expect(first).toContain('```sh\nnpm install && npm start\nnpm test\n```');
  });

  it('has the configuration table generated from CONFIG_OPTIONS', () => {
    const text = readme();
    const s = section(text, 'config-table');
    const want = configTableMarkdown() + '\n';
    if (process.env['UPDATE_README'] && s.body !== want) {
      writeFileSync(README_PATH, text.slice(0, s.start) + want + text.slice(s.end));
    }
    expect(section(readme(), 'config-table').body, 'README config table drifted: UPDATE_README=1 npx vitest run test/e2e/readme.test.ts').toBe(want);
    for (const o of CONFIG_OPTIONS) if (o.env) expect(text).toContain(o.env);
  });

  it('has a troubleshooting row for every error code the proxy can answer', () => {
    const codes = emittedCodes();
    // The scan itself must work: these are known to exist.
    for (const known of ['key_not_paired', 'may_have_executed', 'invalid_request', 'invalid_command', 'upstream_timeout', 'vehicle_busy']) {
      expect(codes.has(known), `scan lost ${known}`).toBe(true);
    }
    const table = section(readme(), 'troubleshooting').body;
    const documented = new Set([...table.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!));
    const missing = [...codes].filter((c) => !documented.has(c)).sort();
    expect(missing, 'add these codes to the README troubleshooting table').toEqual([]);
    // The relayed service statuses a partner meets first.
    for (const status of ['408', '412', '429', '421', '422', 'hide_private', 'Retry-After', '/_ak/']) expect(table).toContain(status);
  });

  it('documents every vcproxy_ metric', () => {
    const names = createMetrics()
      .registry.getMetricsAsArray()
      .map((m) => m.name);
    expect(names.length).toBeGreaterThanOrEqual(8);
    const text = readme();
    for (const n of names) expect(text).toContain(`\`${n}\``);
  });

  it('links only to files that exist', () => {
    const text = readme();
    const links = [...text.matchAll(/\]\(([^)#\s]+)\)/g)].map((m) => m[1]!).filter((l) => !/^[a-z]+:/.test(l));
    expect(links).toContain('docs/commands.md');
    expect(links).toContain('docs/ARCHITECTURE.md');
    for (const l of links) expect(existsSync(join(ROOT, l)), l).toBe(true);
  });
});

/** One README curl line → fetch (the flags the quickstart uses: -X, -H, -d, the URL). */
function curlToFetch(line: string, urls: Record<string, string>, token: string): { url: string; init: RequestInit } {
  const headers: Record<string, string> = {};
  let method = 'GET';
  let body: string | undefined;
  let url = '';
  const re = /-X (\S+)|-H (?:'([^']*)'|"([^"]*)")|-d '([^']*)'|(https?:\/\/\S+)/g;
  for (let m = re.exec(line); m; m = re.exec(line)) {
    if (m[1]) method = m[1];
    else if (m[2] ?? m[3]) {
      const h = (m[2] ?? m[3])!;
      const i = h.indexOf(':');
      headers[h.slice(0, i).trim().toLowerCase()] = h
        .slice(i + 1)
        .trim()
        .replace(/eyJ…|\$T/, token);
    } else if (m[4] !== undefined) {
      body = m[4];
      if (method === 'GET') method = 'POST'; // curl -d implies POST
    } else if (m[5]) url = m[5];
  }
  for (const [from, to] of Object.entries(urls)) url = url.replace(from, to);
  return { url, init: { method, headers, ...(body !== undefined ? { body } : {}) } };
}

describe('README quickstart', () => {
  it('its curl lines work against the sandbox: lock, read locked, set the charge limit, put the car to sleep', async () => {
    const text = readme();
    const quick = text.slice(text.indexOf('## Quickstart'), text.indexOf('## Production'));
    const curls = [...quick.matchAll(/curl -s [^\n`]*/g)].map((m) => m[0]);
    expect(curls.length).toBe(4);
    const dir = mkdtempSync(join(tmpdir(), 'vcp-readme-'));
    const sb = await startSandbox({ port: 0, simPort: 0, dir: join(dir, '.sandbox') });
    try {
      const urls = { 'http://127.0.0.1:4443': sb.proxyUrl, 'http://127.0.0.1:4444': sb.simUrl };
      const run = async (i: number): Promise<{ status: number; json: any }> => {
        const { url, init } = curlToFetch(curls[i]!, urls, sb.token);
        const r = await fetch(url, init);
        return { status: r.status, json: await r.json() };
      };
      const lock = await run(0);
      expect(lock).toEqual({ status: 200, json: { response: { result: true, reason: '' } } });
      const data = await run(1);
      expect(data.status).toBe(200);
      expect(data.json.response.vehicle_state.locked).toBe(true);
      expect(data.json.response.state).toBe('online');
      const limit = await run(2);
      expect(limit).toEqual({ status: 200, json: { response: { result: true, reason: '' } } });
      const sleep = await run(3);
      expect(sleep.status).toBe(200);
      // Asleep now: the proxy relays the service's 408 (troubleshooting table, first rows).
      const asleep = await run(1);
      expect(asleep.status).toBe(408);
      // The lock was signed and verified by the simulated car.
      const log = (await (await fetch(`${sb.simUrl}/_sim/log`)).json()) as { response: Array<{ command?: string; executed?: boolean; verified?: boolean }> };
      expect(log.response.filter((e) => e.command === 'door_lock' && e.executed && e.verified)).toHaveLength(1);
    } finally {
      await sb.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
