/** Vehicle: wake, lights and horn, HomeLink, power modes, name, user data. */
import { z } from 'zod';
import { bool, infotainment, infotainmentPlan, latitude, longitude, wake } from './define.js';
import type { CommandDef } from './types.js';

export const VEHICLE_COMMANDS: readonly CommandDef[] = [
  wake({
    name: 'wake_up',
    area: 'vehicle',
    summary: 'Wake the vehicle (REST wake_up; no signed session is needed).',
  }),
  infotainment({
    name: 'flash_lights',
    area: 'vehicle',
    summary: 'Flash the headlights; the vehicle must be parked.',
    build: () => infotainmentPlan({ vehicleControlFlashLightsAction: {} }),
  }),
  infotainment({
    name: 'honk_horn',
    area: 'vehicle',
    summary: 'Honk the horn; the vehicle must be parked.',
    build: () => infotainmentPlan({ vehicleControlHonkHornAction: {} }),
  }),
  infotainment({
    name: 'trigger_homelink',
    area: 'vehicle',
    summary: 'Trigger the HomeLink device nearest to the given position.',
    schema: z.object({ lat: latitude(), lon: longitude() }),
    build: (b) =>
      infotainmentPlan({ vehicleControlTriggerHomelinkAction: { location: { latitude: b.lat, longitude: b.lon } } }),
  }),
  infotainment({
    name: 'set_low_power_mode',
    area: 'vehicle',
    summary: 'Turn low power mode on or off.',
    schema: z.object({ enable: bool('true turns low power mode on') }),
    build: (b) => infotainmentPlan({ setLowPowerModeAction: { lowPowerMode: b.enable } }),
  }),
  infotainment({
    name: 'keep_accessory_power_mode',
    area: 'vehicle',
    summary: 'Keep accessory power (USB, 12 V) on after exit, or stop doing so.',
    schema: z.object({ enable: bool('true keeps accessory power on') }),
    build: (b) => infotainmentPlan({ setKeepAccessoryPowerModeAction: { keepAccessoryPowerMode: b.enable } }),
  }),
  infotainment({
    name: 'set_vehicle_name',
    area: 'vehicle',
    summary: 'Rename the vehicle; not in guest mode; needs the signed protocol.',
    // 255 is a defensive cap on what we sign, not a documented limit; the vehicle applies its own.
    schema: z.object({ vehicle_name: z.string().min(1).max(255).describe('the new name') }),
    build: (b) => infotainmentPlan({ setVehicleNameAction: { vehicleName: b.vehicle_name } }),
  }),
  infotainment({
    name: 'erase_user_data',
    area: 'vehicle',
    summary: 'Erase user data from the UI; the vehicle must be parked.',
    build: () => infotainmentPlan({ eraseUserDataAction: {} }),
  }),
];
