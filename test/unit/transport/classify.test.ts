import { describe, expect, it } from 'vitest';
import { ambiguousStatus, classifyStatus } from '../../../src/transport/classify.js';

describe('classifyStatus', () => {
  it.each([
    [200, 'signed_command', 'ok'],
    [201, 'rest', 'ok'],
    [401, 'signed_command', 'client_error'],
    [403, 'signed_command', 'client_error'],
    [412, 'rest', 'client_error'],
    [404, 'rest', 'client_error'],
    [408, 'signed_command', 'asleep'],
    [421, 'rest', 'misdirected'],
    [422, 'signed_command', 'unsupported_signed'],
    [422, 'rest', 'client_error'],
    [429, 'signed_command', 'rate_limited'],
    [500, 'signed_command', 'may_have_executed'],
    [503, 'signed_command', 'may_have_executed'],
    [504, 'rest', 'may_have_executed'],
    [540, 'signed_command', 'may_have_executed'],
    [302, 'signed_command', 'may_have_executed'],
  ] as const)('%d on %s → %s', (status, endpoint, cls) => {
    expect(classifyStatus(status, endpoint)).toBe(cls);
  });

  it('maps ambiguous outcomes to 504 for timeouts, else 503', () => {
    expect(ambiguousStatus('timeout')).toBe(504);
    expect(ambiguousStatus(504)).toBe(504);
    expect(ambiguousStatus(500)).toBe(503);
    expect(ambiguousStatus('connection_lost')).toBe(503);
  });
});
