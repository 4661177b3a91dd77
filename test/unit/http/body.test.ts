import { describe, expect, it } from 'vitest';
import { parseJsonBody } from '../../../src/http/body.js';
import { VcpError } from '../../../src/protocol/errors.js';

const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);

describe('parseJsonBody', () => {
  it('reads {} and an empty body as a fresh empty object, anything else through JSON.parse', () => {
    const a = parseJsonBody(bytes('{}'));
    const b = parseJsonBody(bytes('{}'));
    expect(a).toEqual({});
    expect(a).not.toBe(b); // never one shared object a caller could alter
    expect(parseJsonBody(new Uint8Array())).toEqual({});
    expect(parseJsonBody(bytes('{ }'))).toEqual({});
    expect(parseJsonBody(bytes('{"percent":80}'))).toEqual({ percent: 80 });
    expect(parseJsonBody(bytes('[]'))).toEqual([]);
  });

  it('refuses text that is not JSON with invalid_request, without echoing it', () => {
    for (const text of ['{', '{}}', 'pin=1234']) {
      let err: unknown;
      try {
        parseJsonBody(bytes(text));
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(VcpError);
      expect((err as VcpError).code).toBe('invalid_request');
      expect((err as VcpError).message).not.toContain(text);
    }
  });
});
