/**
 * The access-log middleware and the logger's redaction, in process.
 */
import { Writable } from 'node:stream';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { createLogger, SECRET_FIELDS } from '../../../src/log.js';
import { COMMANDS } from '../../../src/commands/index.js';
import { requestLog, requestRecord } from '../../../src/http/request-log.js';
import { logTextWithoutNoise } from '../../support/log-noise.js';

function capture(level = 'trace'): { logger: ReturnType<typeof createLogger>; lines: () => Array<Record<string, unknown>>; text: () => string } {
  let text = '';
  const sink = new Writable({
    write(chunk: Buffer, _e, cb) {
      text += chunk.toString();
      cb();
    },
  });
  return {
    logger: createLogger({ level, destination: sink }),
    text: () => text,
    lines: () =>
      text
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

describe('logger redaction', () => {
  it('covers every secret field the command catalogue declares', () => {
    const declared = COMMANDS.flatMap((c) => c.secretFields);
    expect(declared.length).toBeGreaterThan(0);
    for (const f of declared) expect(SECRET_FIELDS).toContain(f);
  });

  it('redacts secrets at trace level, at the top and nested up to three levels', () => {
    const cap = capture('trace');
    cap.logger.trace(
      {
        pin: '1111',
        password: '2222',
        authorization: 'Bearer tok-3333',
        routable_message: 'AAAA4444',
        body: { pin: '5555', password: '6666' },
        req: { headers: { authorization: 'Bearer tok-7777' } },
        a: { b: { c: { token: 'tok-8888', private_key: 'pk-9999' } } },
      },
      'x',
    );
    // pino's time (ms) is a digit string that may hold '1111' … by chance: left out.
    const t = logTextWithoutNoise(cap.text());
    for (const secret of ['1111', '2222', '3333', '4444', '5555', '6666', '7777', '8888', '9999']) expect(t).not.toContain(secret);
    expect(t).toContain('[redacted]');
  });
});

describe('requestLog middleware', () => {
  function app(cap: ReturnType<typeof capture>): Hono {
    const a = new Hono();
    a.use('*', requestLog(cap.logger));
    a.get('/api/1/vehicles/:vin/thing', (c) => {
      const rec = requestRecord(c);
      if (rec) rec.upstreamStatus = 408;
      return c.text('asleep', 408);
    });
    a.get('/boom', () => {
      throw new Error('boom');
    });
    return a;
  }

  it('returns a safe client X-Request-Id, replaces an unsafe one, and logs the route pattern', async () => {
    const cap = capture('info');
    const a = app(cap);
    const ok = await a.request('/api/1/vehicles/5YJ3E1EA7KF000001/thing?secret=1', { headers: { 'x-request-id': 'abc-1' } });
    expect(ok.headers.get('x-request-id')).toBe('abc-1');
    const bad = await a.request('/api/1/vehicles/5YJ3E1EA7KF000001/thing', { headers: { 'x-request-id': 'evil\u0007"id' } });
    expect(bad.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const [first] = cap.lines();
    expect(first).toMatchObject({
      msg: 'request',
      reqId: 'abc-1',
      method: 'GET',
      route: '/api/1/vehicles/:vin/thing',
      vin: '5YJ3E1EA7KF000001',
      status: 408,
      upstreamStatus: 408,
      outcome: 'upstream_408',
      handshakes: 0,
      resyncs: 0,
    });
    expect(cap.text()).not.toContain('secret=1');
  });

  it('logs exactly one line per request, also when the handler throws', async () => {
    const cap = capture('info');
    const a = app(cap);
    const r = await a.request('/boom');
    expect(r.status).toBe(500);
    expect(r.headers.get('x-request-id')).toBeTruthy();
    expect(cap.lines().filter((l) => l['msg'] === 'request')).toHaveLength(1);
    expect(cap.lines()[0]).toMatchObject({ status: 500, outcome: 'http_500' });
  });
});
