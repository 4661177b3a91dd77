import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { COMMANDS, commandDocsMarkdown, openApiDocument } from '../../../src/commands/index.js';

type Op = {
  operationId: string;
  'x-mode': string;
  'x-domain': string | null;
  requestBody: { content: { 'application/json': { schema: Record<string, unknown> } } };
  responses: Record<string, unknown>;
};

const doc = openApiDocument() as { openapi: string; paths: Record<string, { post: Op }> };
const op = (name: string): Op => {
  const p = doc.paths[`/api/1/vehicles/{vin}/command/${name}`];
  if (!p) throw new Error(`no path for ${name}`);
  return p.post;
};

describe('OpenAPI document', () => {
  it('is OpenAPI 3.1 with one POST path per command, all 81', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toHaveLength(81);
    for (const c of COMMANDS) expect(op(c.name).operationId).toBe(c.name);
  });

  it('states mode and domain', () => {
    expect(op('door_lock')['x-mode']).toBe('signed');
    expect(op('door_lock')['x-domain']).toBe('vehicle_security');
    expect(op('set_charge_limit')['x-domain']).toBe('infotainment');
    expect(op('navigation_request')['x-mode']).toBe('rest');
    expect(op('navigation_request')['x-domain']).toBeNull();
    expect(op('sun_roof_control')['x-mode']).toBe('mixed');
    expect(op('wake_up')['x-mode']).toBe('wake');
  });

  it('describes request bodies as JSON Schema with required fields and ranges', () => {
    const s = op('set_charge_limit').requestBody.content['application/json'].schema;
    expect(s).toMatchObject({
      type: 'object',
      required: ['percent'],
      properties: { percent: { type: 'integer', minimum: 50, maximum: 100 } },
    });
    const t = op('actuate_trunk').requestBody.content['application/json'].schema;
    expect(t).toMatchObject({ properties: { which_trunk: { enum: ['front', 'rear'] } }, required: ['which_trunk'] });
    // Unknown fields are ignored, so the schema must not forbid them.
    expect(t['additionalProperties']).toBeUndefined();
    expect(op('set_charge_limit').responses).toHaveProperty('400');
  });

  it('serialises to JSON', () => {
    expect(JSON.parse(JSON.stringify(doc))).toEqual(doc);
  });
});

describe('docs/commands.md', () => {
  it('is up to date with the catalogue (run `npm run docs:commands`)', () => {
    const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
    const committed = readFileSync(join(root, 'docs', 'commands.md'), 'utf8');
    expect(committed).toBe(commandDocsMarkdown());
  });

  it('lists every command', () => {
    const md = commandDocsMarkdown();
    for (const c of COMMANDS) expect(md).toContain(`| \`${c.name}\` |`);
  });
});
