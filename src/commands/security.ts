/** Security: locks, keyless driving, sentry and guest mode. */
import { z } from 'zod';
import { VCSEC } from '../protocol/pb.js';
import { bool, infotainment, infotainmentPlan, security, vcsecPlan } from './define.js';
import type { CommandDef } from './types.js';

export const SECURITY_COMMANDS: readonly CommandDef[] = [
  security({
    name: 'door_lock',
    area: 'security',
    summary: 'Lock the doors.',
    build: () => vcsecPlan({ RKEAction: VCSEC.RKEAction_E.RKE_ACTION_LOCK }),
  }),
  security({
    name: 'door_unlock',
    area: 'security',
    summary: 'Unlock the doors.',
    // RKE_ACTION_UNLOCK is 0; as a oneof member it is still written on the wire.
    build: () => vcsecPlan({ RKEAction: VCSEC.RKEAction_E.RKE_ACTION_UNLOCK }),
  }),
  security({
    name: 'remote_start_drive',
    area: 'security',
    summary: 'Allow keyless driving; requires keyless driving to be enabled.',
    build: () => vcsecPlan({ RKEAction: VCSEC.RKEAction_E.RKE_ACTION_REMOTE_DRIVE }),
  }),
  infotainment({
    name: 'set_sentry_mode',
    area: 'security',
    summary: 'Turn sentry mode on or off.',
    schema: z.object({ on: bool('true turns sentry mode on') }),
    build: (b) => infotainmentPlan({ vehicleControlSetSentryModeAction: { on: b.on } }),
  }),
  infotainment({
    name: 'guest_mode',
    area: 'security',
    summary: 'Turn guest mode (restricted guest-driver UI) on or off.',
    schema: z.object({ enable: bool('true turns guest mode on') }),
    build: (b) => infotainmentPlan({ guestModeAction: { GuestModeActive: b.enable } }),
  }),
];
