/** Closures: trunk and frunk, Cybertruck tonneau, windows, sunroof. */
import { z } from 'zod';
import { Domain } from '../protocol/domains.js';
import { VCSEC } from '../protocol/pb.js';
import { REST, infotainment, infotainmentPlan, latitude, longitude, mixed, security, vcsecPlan } from './define.js';
import type { CommandDef } from './types.js';

const Move = VCSEC.ClosureMoveType_E;

export const CLOSURE_COMMANDS: readonly CommandDef[] = [
  security({
    name: 'actuate_trunk',
    area: 'closures',
    summary: 'Open the front trunk, or open/close the rear trunk (where the vehicle supports it).',
    // The reference proxy treats a missing or non-string which_trunk as "rear" and moves
    // the rear trunk; the service documents which_trunk as front|rear, so anything else
    // is a 400 here — moving the wrong closure is worse than an error.
    schema: z.object({ which_trunk: z.enum(['front', 'rear']).describe('front or rear') }),
    build: (b) =>
      vcsecPlan({
        closureMoveRequest: b.which_trunk === 'front' ? { frontTrunk: Move.CLOSURE_MOVE_TYPE_MOVE } : { rearTrunk: Move.CLOSURE_MOVE_TYPE_MOVE },
      }),
  }),
  security({
    name: 'open_tonneau',
    area: 'closures',
    summary: 'Open the Cybertruck tonneau; no effect on other vehicles.',
    build: () => vcsecPlan({ closureMoveRequest: { tonneau: Move.CLOSURE_MOVE_TYPE_OPEN } }),
  }),
  security({
    name: 'close_tonneau',
    area: 'closures',
    summary: 'Close the Cybertruck tonneau; no effect on other vehicles.',
    build: () => vcsecPlan({ closureMoveRequest: { tonneau: Move.CLOSURE_MOVE_TYPE_CLOSE } }),
  }),
  security({
    name: 'stop_tonneau',
    area: 'closures',
    summary: 'Stop a moving Cybertruck tonneau; no effect on other vehicles.',
    build: () => vcsecPlan({ closureMoveRequest: { tonneau: Move.CLOSURE_MOVE_TYPE_STOP } }),
  }),
  infotainment({
    name: 'window_control',
    area: 'closures',
    summary: 'Vent or close all windows.',
    notes:
      'lat/lon (the user\'s position, proving proximity for close on older vehicles) are validated but not sent: the signed message has no location field.',
    schema: z.object({
      command: z.enum(['vent', 'close']).describe('vent or close'),
      lat: latitude().optional(),
      lon: longitude().optional(),
    }),
    build: (b) => infotainmentPlan({ vehicleControlWindowAction: b.command === 'vent' ? { vent: {} } : { close: {} } }),
  }),
  mixed({
    name: 'sun_roof_control',
    area: 'closures',
    summary: 'Vent, close or stop the sunroof.',
    domain: Domain.INFOTAINMENT,
    notes:
      'vent and close are signed (VehicleControlSunroofOpenCloseAction); the protocol has no stop action, so state "stop" is forwarded to REST.',
    schema: z.object({ state: z.enum(['vent', 'close', 'stop']).describe('vent, close or stop') }),
    build: (b) => {
      switch (b.state) {
        case 'vent':
          return infotainmentPlan({ vehicleControlSunroofOpenCloseAction: { vent: {} } });
        case 'close':
          return infotainmentPlan({ vehicleControlSunroofOpenCloseAction: { close: {} } });
        case 'stop':
          return REST;
      }
    },
  }),
];
