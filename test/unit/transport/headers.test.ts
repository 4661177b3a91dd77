import { describe, expect, it } from 'vitest';
import { appendForwardedFor, headersFromFetch, stripHopByHop } from '../../../src/transport/headers.js';

describe('header hygiene', () => {
  it('drops hop-by-hop headers and those named by Connection', () => {
    const out = stripHopByHop({
      connection: 'close, X-Secret-Hop',
      'keep-alive': 'timeout=5',
      'transfer-encoding': 'chunked',
      'x-secret-hop': '1',
      host: 'proxy',
      authorization: 'Bearer t',
      'x-custom': ['a', 'b'],
    });
    expect(out).toEqual({ authorization: 'Bearer t', 'x-custom': ['a', 'b'] });
  });
  it('converts fetch Headers', () => {
    const h = new Headers({ Upgrade: 'h2c', 'Content-Type': 'application/json', TE: 'trailers' });
    expect(headersFromFetch(h)).toEqual({ 'content-type': 'application/json' });
  });
  it('appends the client address to X-Forwarded-For', () => {
    const h: Record<string, string | string[]> = { 'x-forwarded-for': '1.1.1.1' };
    appendForwardedFor(h, '2.2.2.2');
    expect(h['x-forwarded-for']).toBe('1.1.1.1, 2.2.2.2');
    const h2: Record<string, string | string[]> = {};
    appendForwardedFor(h2, '3.3.3.3');
    expect(h2['x-forwarded-for']).toBe('3.3.3.3');
    const h3: Record<string, string | string[]> = { 'x-forwarded-for': ['1.1.1.1', '4.4.4.4'] };
    appendForwardedFor(h3, '5.5.5.5');
    expect(h3['x-forwarded-for']).toBe('1.1.1.1, 4.4.4.4, 5.5.5.5');
    const h4: Record<string, string | string[]> = { 'x-forwarded-for': '1.1.1.1' };
    appendForwardedFor(h4, undefined);
    expect(h4['x-forwarded-for']).toBe('1.1.1.1');
  });
});
