/** Software updates. */
import { z } from 'zod';
import { infotainment, infotainmentPlan } from './define.js';
import type { CommandDef } from './types.js';

export const SOFTWARE_COMMANDS: readonly CommandDef[] = [
  infotainment({
    name: 'schedule_software_update',
    area: 'software',
    summary: 'Schedule the pending software install after offset_sec seconds.',
    // offset_sec is an int32 on the wire.
    schema: z.object({ offset_sec: z.number().int().min(0).max(2 ** 31 - 1).describe('delay in seconds') }),
    build: (b) => infotainmentPlan({ vehicleControlScheduleSoftwareUpdateAction: { offsetSec: b.offset_sec } }),
  }),
  infotainment({
    name: 'cancel_software_update',
    area: 'software',
    summary: 'Cancel the pending install countdown.',
    build: () => infotainmentPlan({ vehicleControlCancelSoftwareUpdateAction: {} }),
  }),
];
