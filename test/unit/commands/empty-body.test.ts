/**
 * The cached plan for bodiless calls must be exactly what the full path plans, for every
 * command, and never shared mutable bytes or a clock-dependent plan.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { COMMANDS, computeEmptyBodyPlan, planCommand, type CommandDef, type Plan } from '../../../src/commands/index.js';

const FIXED = { now: () => 1_700_000_000_000 };
/** The plan with its payload as plain bytes (protobufjs may hand out a Buffer, the cache a Uint8Array). */
const plain = (p: Plan): unknown => (p.kind === 'signed' ? { ...p, payload: [...p.payload] } : p);

describe('empty-body plan cache', () => {
  it('plans {} and a missing body exactly as the uncached path does, for every command', () => {
    let cached = 0;
    for (const def of COMMANDS) {
      const reference = planCommand(def.name, {}, FIXED); // an explicit context bypasses the cache
      for (const body of [{}, undefined, null, {}]) {
        const got = planCommand(def.name, body);
        expect(got.ok, def.name).toBe(reference.ok);
        if (got.ok && reference.ok) expect(plain(got.plan), def.name).toEqual(plain(reference.plan));
        if (!got.ok && !reference.ok) expect(got.error.code).toBe(reference.error.code);
      }
      if (computeEmptyBodyPlan(def)) cached++;
    }
    // The bodiless commands (lock, honk, flash, charge start/stop, …) are served from the cache.
    expect(cached).toBeGreaterThanOrEqual(20);
    expect(computeEmptyBodyPlan(COMMANDS.find((c) => c.name === 'flash_lights')!)).toMatchObject({ kind: 'signed' });
  });

  it('hands every caller its own payload bytes', () => {
    const a = planCommand('flash_lights', {});
    const b = planCommand('flash_lights', {});
    if (!a.ok || !b.ok || a.plan.kind !== 'signed' || b.plan.kind !== 'signed') throw new Error('flash_lights should plan a signed command');
    expect(a.plan.payload).not.toBe(b.plan.payload);
    const before = [...b.plan.payload];
    a.plan.payload.fill(0);
    expect([...b.plan.payload]).toEqual(before);
    const c = planCommand('flash_lights', {});
    expect(c.ok && c.plan.kind === 'signed' && [...c.plan.payload]).toEqual(before);
  });

  it('does not cache a plan that reads the clock, nor a body the schema refuses', () => {
    const clocked = {
      name: 'clocked',
      schema: z.object({}),
      build: (_b: unknown, ctx: { now(): number }) => ({ kind: 'signed', domain: 3, payload: Uint8Array.of(ctx.now() % 256) }),
    } as unknown as CommandDef;
    expect(computeEmptyBodyPlan(clocked)).toBe(false);
    const needsField = { name: 'needs', schema: z.object({ percent: z.number() }), build: () => ({ kind: 'rest' }) } as unknown as CommandDef;
    expect(computeEmptyBodyPlan(needsField)).toBe(false);
  });

  it('treats only a plain, key-less object as empty', () => {
    // A JSON "__proto__" key is an own property: the body is not empty and is validated.
    const tricky = JSON.parse('{"__proto__":{"x":1}}') as unknown;
    const r = planCommand('flash_lights', tricky);
    const reference = planCommand('flash_lights', tricky, FIXED);
    expect(r.ok).toBe(reference.ok);
    expect(planCommand('flash_lights', []).ok).toBe(planCommand('flash_lights', [], FIXED).ok);
  });
});
