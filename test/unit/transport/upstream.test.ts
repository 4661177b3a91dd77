import { describe, expect, it } from 'vitest';
import { VcpError } from '../../../src/protocol/errors.js';
import { UpstreamRouter, bearerToken, decodeJwtPayload, hostAllowed } from '../../../src/transport/upstream.js';

function jwt(payload: Record<string, unknown>): string {
  const b = (o: unknown): string => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${b({ alg: 'none' })}.${b(payload)}.sig`;
}

describe('upstream choice', () => {
  it('matches host suffixes only at label boundaries', () => {
    const allowed = ['example.com'];
    expect(hostAllowed('example.com', allowed)).toBe(true);
    expect(hostAllowed('api.eu.EXAMPLE.com', allowed)).toBe(true);
    expect(hostAllowed('evilexample.com', allowed)).toBe(false);
    expect(hostAllowed('example.com.evil.org', allowed)).toBe(false);
  });

  it('decodes URL-safe base64 payloads with or without padding', () => {
    // 'ÿ' (c3 bf) and '~' encode to URL-safe-only characters (_ and -).
    const payload = { sub: 'ÿÿÿ~~~', aud: 'https://x.example.com' };
    const token = jwt(payload);
    expect(token.split('.')[1]).toMatch(/[-_]/);
    expect(decodeJwtPayload(token)).toEqual(payload);
    expect(decodeJwtPayload('a.b')).toBeUndefined();
    expect(decodeJwtPayload('a.!!!.c')).toBeUndefined();
  });

  it('extracts bearer tokens', () => {
    expect(bearerToken('Bearer abc.def.ghi')).toBe('abc.def.ghi');
    expect(bearerToken('bearer  tok ')).toBe('tok');
    expect(bearerToken('Basic abc')).toBeUndefined();
    expect(bearerToken(undefined)).toBeUndefined();
    expect(bearerToken('Bearer ')).toBeUndefined();
  });

  it('uses the fixed upstream when given', () => {
    const r = new UpstreamRouter({ fixed: 'http://127.0.0.1:1', allowed: [] });
    expect(r.resolve('opaque').origin).toBe('http://127.0.0.1:1');
  });

  it('routes by an allowlisted aud, skipping the auth server', () => {
    const r = new UpstreamRouter({ allowed: ['example.com'] });
    const t = jwt({ sub: 's', aud: ['https://auth.example.com/', 'https://fleet-api.eu.example.com'] });
    expect(r.resolve(t)).toEqual({ origin: 'https://fleet-api.eu.example.com', subject: 'sub:s' });
  });

  it('refuses an aud outside the allowlist and opaque tokens without --upstream', () => {
    const r = new UpstreamRouter({ allowed: ['example.com'] });
    const e1 = catchErr(() => r.resolve(jwt({ sub: 's', aud: 'https://evil.org' })));
    expect(e1.code).toBe('upstream_not_allowed');
    expect(e1.status).toBe(403);
    expect(e1.message).toContain('evil.org');
    const e2 = catchErr(() => r.resolve('not-a-jwt'));
    expect(e2.code).toBe('invalid_token');
    expect(e2.status).toBe(401);
  });

  it('re-routes on 421 to allowlisted hosts only and remembers per subject', () => {
    const r = new UpstreamRouter({ allowed: ['example.com'] });
    const a = jwt({ sub: 'alice', aud: 'https://na.example.com' });
    const b = jwt({ sub: 'bob', aud: 'https://na.example.com' });
    const body = Buffer.from(JSON.stringify({ error: 'user out of region, use base URL: https://eu.example.com, see docs' }));
    expect(r.reroute('sub:alice', 'https://na.example.com', {}, body)).toBe('https://eu.example.com');
    expect(r.resolve(a).origin).toBe('https://eu.example.com');
    expect(r.resolve(b).origin).toBe('https://na.example.com');
    // Alt-Svc form
    expect(r.reroute('sub:bob', 'https://na.example.com', { 'alt-svc': 'h2=https://ap.example.com' }, Buffer.alloc(0))).toBe(
      'https://ap.example.com',
    );
    // Not allowlisted, https→http downgrade, or no hint: ignored.
    expect(r.reroute('sub:x', 'https://na.example.com', {}, Buffer.from('use base URL: https://evil.org'))).toBeUndefined();
    expect(r.reroute('sub:x', 'https://na.example.com', {}, Buffer.from('use base URL: http://eu.example.com'))).toBeUndefined();
    expect(r.reroute('sub:x', 'https://na.example.com', {}, Buffer.from('{}'))).toBeUndefined();
  });
});

function catchErr(fn: () => unknown): VcpError {
  try {
    fn();
  } catch (e) {
    if (e instanceof VcpError) return e;
    throw e;
  }
  throw new Error('expected a VcpError');
}
