/**
 * Generated request bodies across every command, through the in-process proxy app
 * (`app.request`) in front of a TRAP upstream that counts what reaches it and answers 408
 * (so valid commands stop there without a 5xx of their own).
 *
 * Properties: the app never throws and never answers 5xx; input the catalogue rejects (or
 * that is not JSON, or over the body limit) gets a 4xx envelope and NOTHING is forwarded.
 *
 * Count: FUZZ_BODIES bodies in total (default 6,000 for CI; `npm run test:fuzz` runs
 * 100,000). Each command gets an equal share plus two megabyte-sized bodies.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseConfig, type ProxyConfig } from '../../src/config.js';
import { buildProxy } from '../../src/cli/serve.js';
import { COMMANDS, planCommand } from '../../src/commands/index.js';
import { LocalKey } from '../../src/keys/index.js';
import type { Upstream, UpstreamRequest, UpstreamResponse } from '../../src/transport/client.js';

const TOTAL = Number(process.env.FUZZ_BODIES ?? 6000);
const PER_COMMAND = Math.max(20, Math.ceil(TOTAL / COMMANDS.length));
const MAX_BODY = 1024 * 1024;
const VIN = '5YJ3E1EA8MF000002';
const TOKEN = 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJmdXp6In0.c2ln';

class TrapUpstream implements Upstream {
  count = 0;
  async request(_req: UpstreamRequest): Promise<UpstreamResponse> {
    this.count++;
    return {
      status: 408,
      headers: { 'content-type': 'application/json' },
      body: Buffer.from('{"response":null,"error":"vehicle unavailable: vehicle is offline or asleep","error_description":""}'),
    };
  }
  async close(): Promise<void> {}
}

const trap = new TrapUpstream();
const config = parseConfig(['--key', '/nonexistent.pem', '--upstream', 'http://127.0.0.1:9', '--max-body-bytes', String(MAX_BODY)], {}) as ProxyConfig;
const key = LocalKey.fromScalar(Uint8Array.from({ length: 32 }, (_, i) => i + 1));
const { app } = buildProxy(config, key, { upstream: trap, metrics: null, sleep: async () => undefined });

const weird = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.double(),
  fc.integer({ min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER }),
  fc.bigInt().map((b) => b.toString()),
  fc.constantFrom('NaN', 'Infinity', '-Infinity', '1e309', '-0', '0x10', '', ' ', '\u0000', '１２', true, false, null, [], {}),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom('front', 'rear', 'vent', 'close', 'open', 'stop', '1234', 'MON,TUE', 'Curfew', 'all', 'on', 'off'),
  fc.integer({ min: -5, max: 3000 }),
);

/** Raw JSON text that JSON.stringify cannot produce: huge literals, deep nesting, duplicates. */
function rawTexts(keys: string[]): fc.Arbitrary<string> {
  const k = keys.length ? fc.constantFrom(...keys) : fc.constant('x');
  return fc.oneof(
    fc.tuple(k, fc.constantFrom('1e400', '-1e400', '123456789012345678901234567890', '0.0000000000000000000001', '-0', '1E+2')).map(([key, lit]) => `{"${key}": ${lit}}`),
    fc.tuple(k, fc.integer({ min: 50, max: 5000 })).map(([key, n]) => `{"${key}": ${'['.repeat(n)}${']'.repeat(n)}}`),
    fc.integer({ min: 50, max: 5000 }).map((n) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`),
    fc.tuple(k, weird, weird).map(([key, a, b]) => `{"${key}": ${JSON.stringify(a) ?? 'null'}, "${key}": ${JSON.stringify(b) ?? 'null'}}`),
    fc.string({ maxLength: 60 }),
    fc.string({ unit: 'binary', maxLength: 60 }),
    fc.constantFrom('', 'null', '[]', '"str"', '42', 'true', '{', '{"a":}', '\ufeff{}', '{}garbage', 'NaN', '{"__proto__": {"x": 1}}', '{"constructor": {"prototype": {}}}'),
  );
}

function bodies(name: string): fc.Arbitrary<string> {
  const def = COMMANDS.find((c) => c.name === name)!;
  const shape = (def.schema as unknown as { shape?: Record<string, unknown> }).shape ?? {};
  const keys = Object.keys(shape);
  const obj = keys.length
    ? fc.dictionary(fc.constantFrom(...keys), weird, { maxKeys: keys.length + 1 })
    : fc.dictionary(fc.string({ maxLength: 8 }), weird, { maxKeys: 3 });
  return fc.oneof(
    { arbitrary: obj.map((o) => JSON.stringify(o)), weight: 5 },
    { arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)), weight: 2 },
    { arbitrary: rawTexts(keys), weight: 3 },
  );
}

function expectation(name: string, text: string): 'invalid' | 'maybe-forwarded' {
  if (Buffer.byteLength(text) > MAX_BODY) return 'invalid';
  let parsed: unknown = {};
  if (text !== '') {
    try {
      parsed = JSON.parse(text);
    } catch {
      return 'invalid';
    }
  }
  return planCommand(name, parsed).ok ? 'maybe-forwarded' : 'invalid';
}

async function send(name: string, text: string, contentType = 'application/json'): Promise<void> {
  const before = trap.count;
  const res = await app.request(`/api/1/vehicles/${VIN}/command/${encodeURIComponent(name)}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': contentType },
    body: text,
  });
  const answer = await res.text();
  if (res.status >= 500) throw new Error(`${name}: ${res.status} for body ${JSON.stringify(text.slice(0, 200))}: ${answer.slice(0, 200)}`);
  if (expectation(name, text) === 'invalid') {
    if (trap.count !== before) throw new Error(`${name}: invalid body was forwarded: ${JSON.stringify(text.slice(0, 200))}`);
    expect(res.status).toBeGreaterThanOrEqual(400);
    const env = JSON.parse(answer) as { response: unknown; error: unknown; error_description: unknown };
    expect(env.response).toBeNull();
    expect(typeof env.error).toBe('string');
    // The answer never echoes the body back.
    if (text.length > 40) expect(answer.includes(text)).toBe(false);
  }
}

describe(`generated bodies through the proxy app (${PER_COMMAND} per command, FUZZ_BODIES=${TOTAL})`, () => {
  it.each(COMMANDS.map((c) => c.name))('%s: no crash, no 5xx, nothing forwarded for invalid input', async (name) => {
    await fc.assert(
      fc.asyncProperty(bodies(name), (text) => send(name, text)),
      { numRuns: PER_COMMAND },
    );
    // Megabyte strings: one just under the limit, one over it (refused before parsing).
    const field = Object.keys((COMMANDS.find((c) => c.name === name)!.schema as unknown as { shape?: object }).shape ?? {})[0] ?? 'x';
    await send(name, JSON.stringify({ [field]: 'é'.repeat(400_000) }));
    await send(name, JSON.stringify({ [field]: 'x'.repeat(MAX_BODY) }));
  }, Math.max(20_000, PER_COMMAND * 20));

  it('unknown or hostile command names: 4xx, nothing forwarded', async () => {
    const names = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.string({ unit: 'binary', maxLength: 40 }),
      fc.constantFrom('..', '../signed_command', 'flash_lights/../../wake_up', 'FLASH_LIGHTS', 'flash_lights ', '%00', 'constructor', '__proto__', 'toString'),
    );
    await fc.assert(
      fc.asyncProperty(names, fc.constantFrom('{}', '', 'x'), async (name, body) => {
        const before = trap.count;
        let url: string;
        try {
          url = `/api/1/vehicles/${VIN}/command/${encodeURIComponent(name)}`;
        } catch {
          return; // lone surrogates cannot be put in a URL by any client
        }
        const res = await app.request(url, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body });
        await res.arrayBuffer();
        expect(res.status).toBeLessThan(500);
        // '' and dot segments do not form a command path (URL normalization removes them);
        // such requests are ordinary pass-through traffic by design, not commands.
        const isCommandPath = name !== '' && name !== '.' && name !== '..';
        if (isCommandPath && !COMMANDS.some((c) => c.name === name)) {
          expect(res.status).toBeGreaterThanOrEqual(400);
          expect(trap.count).toBe(before);
        }
      }),
      { numRuns: Math.max(200, Math.floor(TOTAL / 20)) },
    );
  }, 60_000);
});
