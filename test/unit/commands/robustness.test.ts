/**
 * planCommand must never throw for client input: any JSON body gives either a plan or a
 * 400 invalid_request, and every signed plan decodes as the message type of its domain.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { COMMANDS, planCommand } from '../../../src/commands/index.js';
import { CarServer, VCSEC } from '../../../src/protocol/pb.js';

const ctx = { now: () => 1_700_000_000_000 };

function check(name: string, body: unknown): void {
  const r = planCommand(name, body, ctx);
  if (!r.ok) {
    expect(r.error.code).toBe('invalid_request');
    expect(Object.keys(r.error.messages ?? {}).length).toBeGreaterThan(0);
    return;
  }
  if (r.plan.kind === 'signed') {
    const decode = r.plan.domain === 2 ? VCSEC.UnsignedMessage.decode : CarServer.Action.decode;
    expect(() => decode(r.plan.kind === 'signed' ? r.plan.payload : new Uint8Array())).not.toThrow();
  }
}

// Objects built from each command's own field names, with arbitrary JSON values, so the
// generator reaches the schemas' interesting branches rather than only "not an object".
function bodyFor(name: string): fc.Arbitrary<unknown> {
  const def = COMMANDS.find((c) => c.name === name);
  const shape = (def?.schema as unknown as { shape?: Record<string, unknown> }).shape ?? {};
  const keys = Object.keys(shape);
  const value = fc.oneof(
    fc.jsonValue({ maxDepth: 2 }),
    fc.integer({ min: -5, max: 3000 }),
    fc.constantFrom('front', 'rear', 'vent', 'close', 'stop', '1234', 'MON,TUE', 'Curfew', true, false),
  );
  return fc.oneof(
    fc.jsonValue({ maxDepth: 3 }),
    keys.length === 0 ? fc.constant({}) : fc.dictionary(fc.constantFrom(...keys), value, { maxKeys: keys.length }),
  );
}

describe('planCommand robustness', () => {
  it.each(COMMANDS.map((c) => c.name))('%s never throws on arbitrary JSON bodies', (name) => {
    fc.assert(
      fc.property(bodyFor(name), (body) => {
        check(name, body);
      }),
      { numRuns: 60, seed: 4242 },
    );
  });

  it('never throws on arbitrary command names', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), (name) => {
        const r = planCommand(name, {});
        if (!r.ok) expect(['invalid_command', 'invalid_request']).toContain(r.error.code);
      }),
      { numRuns: 200, seed: 7 },
    );
  });
});
