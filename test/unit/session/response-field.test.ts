/**
 * `responseField`: the service's `{"response": "<base64>"}` envelope, read without a JSON
 * parse in its exact common shape and with JSON.parse otherwise — both must agree.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { responseField } from '../../../src/session/dispatcher.js';

const viaJson = (body: string): string | undefined => {
  try {
    const j = JSON.parse(body) as { response?: unknown } | null;
    return typeof j?.response === 'string' ? j.response : undefined;
  } catch {
    return undefined;
  }
};

describe('responseField', () => {
  it('reads the exact envelope and every other JSON shape alike', () => {
    const cases = [
      '{"response":"CgQIAhIA"}',
      '{"response":""}',
      '{ "response": "CgQIAhIA" }',
      '{"response":"CgQIAhIA","error":null}',
      '{"response":"a\\"b"}',
      '{"response":"\\u0041QID"}',
      '{"response":null}',
      '{"response":12}',
      '{"error":"vehicle unavailable"}',
      'null',
      '[]',
      'not json',
      '{"response":"CgQ',
      '',
    ];
    for (const body of cases) expect(responseField(Buffer.from(body)), body).toBe(viaJson(body));
    expect(responseField(Buffer.from('{"response":"CgQIAhIA"}'))).toBe('CgQIAhIA');
  });

  it('property: agrees with JSON.parse for any string value, including quotes, escapes and unicode', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (value) => {
        const body = JSON.stringify({ response: value });
        expect(responseField(Buffer.from(body))).toBe(value);
      }),
      { numRuns: 2000 },
    );
  });
});
