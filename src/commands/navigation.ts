/**
 * Navigation and sharing. The signed protocol has no message for any of these (the
 * service resolves places and calendars server-side), so all are forwarded to REST.
 */
import { z } from 'zod';
import { forwarded, latitude, longitude } from './define.js';
import type { CommandDef } from './types.js';

const NOTE = 'No signed-protocol message exists; the validated body is forwarded unchanged to REST.';
const order = () => z.number().int().min(0).describe('position of this stop when sending several (optional)');

export const NAVIGATION_COMMANDS: readonly CommandDef[] = [
  forwarded({
    name: 'navigation_request',
    area: 'navigation',
    summary: 'Send a location (shared text such as an address) to the navigation system.',
    notes: NOTE,
    schema: z.object({
      type: z.string().min(1).describe('share type, e.g. "share_ext_content_raw"'),
      value: z
        .looseObject({ 'android.intent.extra.TEXT': z.string().optional() })
        .describe('shared content, e.g. {"android.intent.extra.TEXT": "<address>"}'),
      locale: z.string().optional().describe('locale of the shared text, e.g. "en-US"'),
      timestamp_ms: z.union([z.number().int(), z.string()]).optional().describe('time of sharing in ms since the epoch'),
    }),
  }),
  forwarded({
    name: 'navigation_gps_request',
    area: 'navigation',
    summary: 'Navigate to coordinates.',
    notes: NOTE,
    schema: z.object({ lat: latitude(), lon: longitude(), order: order().optional() }),
  }),
  forwarded({
    name: 'navigation_sc_request',
    area: 'navigation',
    summary: 'Navigate to a charging site by id.',
    notes: NOTE,
    schema: z.object({
      id: z.number().int().min(0).describe('charging site id'),
      order: order().optional(),
    }),
  }),
  forwarded({
    name: 'navigation_waypoints_request',
    area: 'navigation',
    summary: 'Send a list of waypoints.',
    notes: NOTE,
    schema: z.object({
      waypoints: z.string().min(1).describe('comma-separated place references, e.g. "refId:…,refId:…"'),
    }),
  }),
  forwarded({
    name: 'upcoming_calendar_entries',
    area: 'navigation',
    summary: 'Store upcoming calendar entries on the vehicle.',
    notes: NOTE,
    schema: z.object({ calendar_data: z.string().min(1).describe('calendar data as the service expects it') }),
  }),
];
