/** Charge and preconditioning schedules, scheduled charging and departure. */
import { z } from 'zod';
import type { CarServer } from '../protocol/pb.js';
import {
  bool,
  daysMask,
  daysOfWeek,
  infotainment,
  infotainmentPlan,
  latitude,
  longitude,
  minutesAfterMidnight,
  requireWhen,
  scheduleId,
} from './define.js';
import type { BuildContext, CommandDef } from './types.js';

/**
 * A schedule without an id (or with id 0) gets "now" in epoch seconds, as the service
 * and the reference do; the clock comes from the build context so tests are repeatable.
 */
function idOrNow(id: number | undefined, ctx: BuildContext): number {
  return id === undefined || id === 0 ? Math.floor(ctx.now() / 1000) : id;
}

const optionalId = () =>
  z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).describe('schedule id (epoch seconds); omitted or 0 = now').optional();

type Times = CarServer.PreconditioningTimes.$Properties;

/**
 * The reference's policy rule: `*_weekdays_only` wins (weekdays), else `*_enabled` means
 * all week, else off (field absent).
 */
function policy(enabled: boolean | undefined, weekdaysOnly: boolean | undefined): Times | undefined {
  if (weekdaysOnly) return { weekdays: {} };
  if (enabled) return { allWeek: {} };
  return undefined;
}

export const SCHEDULE_COMMANDS: readonly CommandDef[] = [
  infotainment({
    name: 'add_charge_schedule',
    area: 'schedules',
    summary: 'Add (or replace, by id) a charge schedule.',
    schema: z
      .object({
        days_of_week: daysOfWeek(),
        enabled: bool('whether the schedule is active'),
        start_enabled: bool('whether the schedule starts charging at start_time'),
        start_time: minutesAfterMidnight('start, minutes after midnight; required when start_enabled').optional(),
        end_enabled: bool('whether the schedule stops charging at end_time'),
        end_time: minutesAfterMidnight('end, minutes after midnight; required when end_enabled').optional(),
        lat: latitude(),
        lon: longitude(),
        id: optionalId(),
        one_time: bool('run once (default false)').optional(),
      })
      .superRefine((b, ctx) => {
        // The reference silently uses midnight for a missing enabled time; that is a
        // schedule nobody asked for, so it is an error here.
        requireWhen(ctx, b.start_enabled, b.start_time, 'start_time', 'when start_enabled is true');
        requireWhen(ctx, b.end_enabled, b.end_time, 'end_time', 'when end_enabled is true');
      }),
    build: (b, ctx) =>
      infotainmentPlan({
        addChargeScheduleAction: {
          id: idOrNow(b.id, ctx),
          daysOfWeek: daysMask(b.days_of_week),
          startEnabled: b.start_enabled,
          startTime: b.start_time ?? 0,
          endEnabled: b.end_enabled,
          endTime: b.end_time ?? 0,
          oneTime: b.one_time ?? false,
          enabled: b.enabled,
          latitude: b.lat,
          longitude: b.lon,
        },
      }),
  }),
  infotainment({
    name: 'remove_charge_schedule',
    area: 'schedules',
    summary: 'Remove a charge schedule by id.',
    schema: z.object({ id: scheduleId('id of the schedule to remove') }),
    build: (b) => infotainmentPlan({ removeChargeScheduleAction: { id: b.id } }),
  }),
  infotainment({
    name: 'add_precondition_schedule',
    area: 'schedules',
    summary: 'Add (or replace, by id) a preconditioning schedule.',
    schema: z.object({
      days_of_week: daysOfWeek(),
      enabled: bool('whether the schedule is active'),
      precondition_time: minutesAfterMidnight('ready-by time, minutes after midnight'),
      lat: latitude(),
      lon: longitude(),
      id: optionalId(),
      one_time: bool('run once (default false)').optional(),
    }),
    build: (b, ctx) =>
      infotainmentPlan({
        addPreconditionScheduleAction: {
          id: idOrNow(b.id, ctx),
          daysOfWeek: daysMask(b.days_of_week),
          preconditionTime: b.precondition_time,
          oneTime: b.one_time ?? false,
          enabled: b.enabled,
          latitude: b.lat,
          longitude: b.lon,
        },
      }),
  }),
  infotainment({
    name: 'remove_precondition_schedule',
    area: 'schedules',
    summary: 'Remove a preconditioning schedule by id.',
    schema: z.object({ id: scheduleId('id of the schedule to remove') }),
    build: (b) => infotainmentPlan({ removePreconditionScheduleAction: { id: b.id } }),
  }),
  infotainment({
    name: 'set_scheduled_charging',
    area: 'schedules',
    summary: 'Enable or disable scheduled charging (deprecated from firmware 2024.26; use add_charge_schedule).',
    schema: z
      .object({
        enable: bool('true enables scheduled charging'),
        time: minutesAfterMidnight('start, minutes after midnight vehicle local time; required when enable').optional(),
      })
      // The reference defaults a missing time to midnight; required here when enabling.
      .superRefine((b, ctx) => requireWhen(ctx, b.enable, b.time, 'time', 'when enable is true')),
    build: (b) => infotainmentPlan({ scheduledChargingAction: { enabled: b.enable, chargingTime: b.time ?? 0 } }),
  }),
  infotainment({
    name: 'set_scheduled_departure',
    area: 'schedules',
    summary:
      'Enable or disable scheduled departure (deprecated from firmware 2024.26; use add_precondition_schedule).',
    schema: z
      .object({
        enable: bool('true enables scheduled departure; false clears it'),
        departure_time: minutesAfterMidnight('departure, minutes after midnight; required when enable').optional(),
        preconditioning_enabled: bool('precondition before departure, all week').optional(),
        preconditioning_weekdays_only: bool('precondition on weekdays only').optional(),
        off_peak_charging_enabled: bool('charge off-peak, all week').optional(),
        off_peak_charging_weekdays_only: bool('charge off-peak on weekdays only').optional(),
        end_off_peak_time: minutesAfterMidnight('end of off-peak hours, minutes after midnight; required when off-peak charging is on').optional(),
      })
      .superRefine((b, ctx) => {
        // The reference defaults both times to midnight when missing.
        requireWhen(ctx, b.enable, b.departure_time, 'departure_time', 'when enable is true');
        const offPeak = Boolean(b.off_peak_charging_enabled || b.off_peak_charging_weekdays_only);
        requireWhen(ctx, b.enable && offPeak, b.end_off_peak_time, 'end_off_peak_time', 'when off-peak charging is on');
      }),
    build: (b) => {
      if (!b.enable) return infotainmentPlan({ scheduledDepartureAction: { enabled: false } });
      const pre = policy(b.preconditioning_enabled, b.preconditioning_weekdays_only);
      const off = policy(b.off_peak_charging_enabled, b.off_peak_charging_weekdays_only);
      return infotainmentPlan({
        scheduledDepartureAction: {
          enabled: true,
          departureTime: b.departure_time ?? 0,
          ...(pre ? { preconditioningTimes: pre } : {}),
          ...(off ? { offPeakChargingTimes: off } : {}),
          offPeakHoursEndTime: b.end_off_peak_time ?? 0,
        },
      });
    },
  }),
];
