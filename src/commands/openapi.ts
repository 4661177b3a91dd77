/**
 * OpenAPI 3.1 description of every command endpoint, generated from COMMANDS so it cannot
 * drift from what the proxy accepts. Served by the HTTP layer; no I/O here.
 */
import { z } from 'zod';
import { domainName } from '../protocol/domains.js';
import type { CommandDef } from './types.js';

/** JSON Schema (2020-12, as OpenAPI 3.1 uses) of a command's request body. */
export function bodyJsonSchema(def: CommandDef): Record<string, unknown> {
  // io 'input': describe what clients send. Refinements (e.g. "password required when
  // on is true") cannot be expressed and are given in the field descriptions instead.
  const schema = z.toJSONSchema(def.schema, { target: 'draft-2020-12', io: 'input', unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
  delete schema['$schema'];
  // Unknown fields are ignored, not rejected: say so instead of zod's strict default.
  delete schema['additionalProperties'];
  return schema;
}

export function commandPath(name: string): string {
  return `/api/1/vehicles/{vin}/command/${name}`;
}

function describe(def: CommandDef): string {
  const how =
    def.mode === 'signed'
      ? `Signed by the proxy with the vehicle command protocol (${domainName(def.domain ?? -1)} domain).`
      : def.mode === 'mixed'
        ? `Signed for some values (${domainName(def.domain ?? -1)} domain), forwarded to the service for others.`
        : def.mode === 'rest'
          ? 'Forwarded unchanged to the service: the signed protocol has no message for it.'
          : 'Forwarded to the service; wakes the vehicle, no signing.';
  return [def.summary, how, def.notes, def.ownerOnly ? 'Owners and fleet managers only.' : undefined]
    .filter((s): s is string => Boolean(s))
    .join('\n\n');
}

export function buildOpenApiDocument(commands: readonly CommandDef[]): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const def of commands) {
    paths[commandPath(def.name)] = {
      post: {
        operationId: def.name,
        tags: [def.area],
        summary: def.summary,
        description: describe(def),
        'x-domain': def.domain === null ? null : domainName(def.domain),
        'x-mode': def.mode,
        'x-owner-only': def.ownerOnly,
        parameters: [{ $ref: '#/components/parameters/vin' }],
        requestBody: {
          required: false,
          content: { 'application/json': { schema: bodyJsonSchema(def) } },
        },
        responses: {
          '200': {
            description: 'The vehicle answered; result false comes with a reason.',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/CommandResponse' } } },
          },
          '400': {
            description: 'invalid_command (unknown name) or invalid_request (messages names each bad field).',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
          },
          default: {
            description: 'Error envelope (authentication, vehicle offline, upstream errors, …).',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
          },
        },
      },
    };
  }
  const areas = [...new Set(commands.map((c) => c.area))].sort();
  return {
    openapi: '3.1.0',
    info: {
      title: 'vehicle-command-proxy: vehicle commands',
      version: '1',
      description:
        'Every vehicle command the proxy accepts. x-mode says whether the proxy signs it (signed), forwards it unchanged (rest), decides by value (mixed) or wakes the vehicle (wake); x-domain is the protocol domain of signed commands.',
    },
    tags: areas.map((name) => ({ name })),
    security: [{ bearer: [] }],
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      parameters: {
        vin: {
          name: 'vin',
          in: 'path',
          required: true,
          description: 'vehicle VIN (or the integer id from the vehicle list)',
          schema: { type: 'string' },
        },
      },
      schemas: {
        CommandResponse: {
          type: 'object',
          required: ['response'],
          properties: {
            response: {
              type: 'object',
              required: ['result'],
              properties: { result: { type: 'boolean' }, reason: { type: 'string' } },
            },
          },
        },
        ErrorEnvelope: {
          type: 'object',
          required: ['error'],
          properties: {
            response: { type: 'null' },
            error: { type: 'string' },
            error_description: { type: 'string' },
            messages: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } },
          },
        },
      },
    },
  };
}
