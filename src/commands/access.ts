/**
 * Access restrictions: valet mode, PIN to drive, speed limit mode, parental controls.
 * PINs/passwords are secrets: they are listed in `secretFields` and never echoed in errors.
 */
import { z } from 'zod';
import { CarServer } from '../protocol/pb.js';
import { bool, infotainment, infotainmentPlan, pin, requireWhen } from './define.js';
import type { CommandDef } from './types.js';

/**
 * Speed limits in mph. The owner's manual allows a speed-limit-mode maximum between
 * 50 and 120 mph; the vehicle reports its own min/max and rejects anything else.
 */
const limitMph = (description: string) => z.number().min(50).max(120).describe(description);

/** The protocol's parental-control settings; the JSON body names them as the enum does. */
const SETTING = CarServer.ParentalControlsEnableSettingsAction.ParentalControlsSetting_E;
type SettingName = keyof typeof SETTING;
// Object.keys of a generated enum lists only the names (the id → name map is its prototype).
const PARENTAL_SETTINGS = Object.keys(SETTING) as [SettingName, ...SettingName[]];

export const ACCESS_COMMANDS: readonly CommandDef[] = [
  infotainment({
    name: 'set_valet_mode',
    area: 'access',
    summary: 'Turn valet mode on (with a four-digit password) or off.',
    secretFields: ['password'],
    schema: z
      .object({
        on: bool('true turns valet mode on'),
        password: pin('four-digit valet PIN; required when on is true').optional(),
      })
      .superRefine((b, ctx) => requireWhen(ctx, b.on, b.password, 'password', 'when on is true')),
    // Turning valet mode off needs no PIN on the signed protocol; like the reference we
    // send none even if one was given.
    build: (b) =>
      infotainmentPlan({
        vehicleControlSetValetModeAction: b.on ? { on: true, password: b.password ?? '' } : { on: false },
      }),
  }),
  infotainment({
    name: 'reset_valet_pin',
    area: 'access',
    summary: 'Clear the valet PIN; valet mode must be off.',
    build: () => infotainmentPlan({ vehicleControlResetValetPinAction: {} }),
  }),
  infotainment({
    name: 'set_pin_to_drive',
    area: 'access',
    summary: 'Turn PIN to drive on (with a four-digit PIN) or off; needs the signed protocol.',
    secretFields: ['password'],
    schema: z
      .object({
        on: bool('true turns PIN to drive on'),
        password: pin('four-digit PIN; required when on is true').optional(),
      })
      .superRefine((b, ctx) => requireWhen(ctx, b.on, b.password, 'password', 'when on is true')),
    build: (b) =>
      infotainmentPlan({ vehicleControlSetPinToDriveAction: { on: b.on, password: b.password ?? '' } }),
  }),
  infotainment({
    name: 'reset_pin_to_drive_pin',
    area: 'access',
    summary: 'Reset the PIN-to-drive PIN.',
    ownerOnly: true,
    build: () => infotainmentPlan({ vehicleControlResetPinToDriveAction: {} }),
  }),
  infotainment({
    name: 'clear_pin_to_drive_admin',
    area: 'access',
    summary: 'Deactivate PIN to drive and reset its PIN.',
    ownerOnly: true,
    build: () => infotainmentPlan({ vehicleControlResetPinToDriveAdminAction: {} }),
  }),
  infotainment({
    name: 'speed_limit_activate',
    area: 'access',
    summary: 'Activate speed limit mode with a four-digit PIN.',
    secretFields: ['pin'],
    schema: z.object({ pin: pin('four-digit speed limit PIN') }),
    build: (b) => infotainmentPlan({ drivingSpeedLimitAction: { activate: true, pin: b.pin } }),
  }),
  infotainment({
    name: 'speed_limit_deactivate',
    area: 'access',
    summary: 'Deactivate speed limit mode with its four-digit PIN.',
    secretFields: ['pin'],
    schema: z.object({ pin: pin('four-digit speed limit PIN') }),
    build: (b) => infotainmentPlan({ drivingSpeedLimitAction: { activate: false, pin: b.pin } }),
  }),
  infotainment({
    name: 'speed_limit_clear_pin',
    area: 'access',
    summary: 'Deactivate speed limit mode and clear its PIN, given the current PIN.',
    secretFields: ['pin'],
    schema: z.object({ pin: pin('current four-digit speed limit PIN') }),
    build: (b) => infotainmentPlan({ drivingClearSpeedLimitPinAction: { pin: b.pin } }),
  }),
  infotainment({
    name: 'speed_limit_clear_pin_admin',
    area: 'access',
    summary: 'Deactivate speed limit mode and clear its PIN without it.',
    ownerOnly: true,
    build: () => infotainmentPlan({ drivingClearSpeedLimitPinAdminAction: {} }),
  }),
  infotainment({
    name: 'speed_limit_set_limit',
    area: 'access',
    summary: 'Set the speed limit mode maximum, in mph.',
    schema: z.object({ limit_mph: limitMph('maximum speed in mph (50..120)') }),
    build: (b) => infotainmentPlan({ drivingSetSpeedLimitAction: { limitMph: b.limit_mph } }),
  }),
  infotainment({
    name: 'parental_controls_activate',
    area: 'access',
    summary: 'Activate parental controls with a four-digit PIN.',
    secretFields: ['pin'],
    schema: z.object({ pin: pin('four-digit parental controls PIN') }),
    build: (b) => infotainmentPlan({ parentalControlsAction: { activate: true, pin: b.pin } }),
  }),
  infotainment({
    name: 'parental_controls_deactivate',
    area: 'access',
    summary: 'Deactivate parental controls with the current four-digit PIN.',
    secretFields: ['pin'],
    schema: z.object({ pin: pin('current four-digit parental controls PIN') }),
    build: (b) => infotainmentPlan({ parentalControlsAction: { activate: false, pin: b.pin } }),
  }),
  infotainment({
    name: 'parental_controls_clear_pin_admin',
    area: 'access',
    summary: 'Clear the parental controls PIN without it.',
    ownerOnly: true,
    build: () => infotainmentPlan({ parentalControlsClearPinAdminAction: {} }),
  }),
  infotainment({
    name: 'parental_controls_enable_setting',
    area: 'access',
    summary: 'Enable or disable one parental controls setting.',
    schema: z.object({
      setting: z.enum(PARENTAL_SETTINGS).describe('the setting to change'),
      enable: bool('true enables the setting'),
    }),
    build: (b) =>
      infotainmentPlan({
        parentalControlsEnableSettingsAction: {
          setting: SETTING[b.setting],
          enable: b.enable,
        },
      }),
  }),
  infotainment({
    name: 'parental_controls_set_speed_limit',
    area: 'access',
    summary: 'Set the parental controls speed limit in mph; the SpeedLimit setting must be enabled first.',
    schema: z.object({ limit_mph: limitMph('maximum speed in mph (50..120)') }),
    build: (b) => infotainmentPlan({ parentalControlsSetSpeedLimitAction: { limitMph: b.limit_mph } }),
  }),
];
