/** Media: volume, playback, favourites, external speaker. */
import { z } from 'zod';
import { forwarded, infotainment, infotainmentPlan } from './define.js';
import type { CommandDef } from './types.js';

export const MEDIA_COMMANDS: readonly CommandDef[] = [
  infotainment({
    name: 'adjust_volume',
    area: 'media',
    summary: 'Set the media volume; the user must be present and mobile access enabled.',
    // 0..10 is the reference's vehicle-side bound for an absolute volume (SetVolume).
    schema: z.object({ volume: z.number().min(0).max(10).describe('absolute volume (0..10)') }),
    build: (b) => infotainmentPlan({ mediaUpdateVolume: { volumeAbsoluteFloat: b.volume } }),
  }),
  infotainment({
    name: 'media_toggle_playback',
    area: 'media',
    summary: 'Toggle media play/pause.',
    build: () => infotainmentPlan({ mediaPlayAction: {} }),
  }),
  infotainment({
    name: 'media_next_track',
    area: 'media',
    summary: 'Skip to the next track.',
    build: () => infotainmentPlan({ mediaNextTrack: {} }),
  }),
  infotainment({
    name: 'media_prev_track',
    area: 'media',
    summary: 'Go back to the previous track.',
    build: () => infotainmentPlan({ mediaPreviousTrack: {} }),
  }),
  infotainment({
    name: 'media_next_fav',
    area: 'media',
    summary: 'Skip to the next favourite.',
    build: () => infotainmentPlan({ mediaNextFavorite: {} }),
  }),
  infotainment({
    name: 'media_prev_fav',
    area: 'media',
    summary: 'Go back to the previous favourite.',
    build: () => infotainmentPlan({ mediaPreviousFavorite: {} }),
  }),
  infotainment({
    name: 'media_volume_up',
    area: 'media',
    summary: 'Raise the volume by one notch.',
    // Only the sign of volume_delta matters to the vehicle: one notch per command.
    build: () => infotainmentPlan({ mediaUpdateVolume: { volumeDelta: 1 } }),
  }),
  infotainment({
    name: 'media_volume_down',
    area: 'media',
    summary: 'Lower the volume by one notch.',
    build: () => infotainmentPlan({ mediaUpdateVolume: { volumeDelta: -1 } }),
  }),
  forwarded({
    name: 'remote_boombox',
    area: 'media',
    summary: 'Play a sound on the external speaker: 0 random, 2000 locate beep.',
    notes: 'The signed protocol has no external-speaker action; forwarded to REST.',
    schema: z.object({
      sound: z.union([z.literal(0), z.literal(2000)]).describe('0 (random sound) or 2000 (locate beep)'),
    }),
  }),
];
