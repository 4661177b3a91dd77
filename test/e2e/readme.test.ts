/**
 * The README stays true to the code: the two set-up commands come first, the configuration
 * table equals what CONFIG_OPTIONS generates, every error code the proxy can answer has a
 * troubleshooting row, every metric is documented, and the files it links exist.
 *
 * `UPDATE_README=1 npx vitest run test/e2e/readme.test.ts` rewrites the generated table.
 */
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
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
