/**
 * Discovery-tier limits per vehicle per (UTC) day: device data 200, commands 50,
 * wake-up 15, charging commands 5 (which also count as commands; the set is
 * CHARGING_LIMITED_COMMANDS in state.ts). Exceeding one answers 429 with Retry-After =
 * seconds to the next UTC day.
 */
export type LimitKind = 'device_data' | 'commands' | 'wake' | 'charging';

export const DISCOVERY_LIMITS: Record<LimitKind, number> = { device_data: 200, commands: 50, wake: 15, charging: 5 };

const DAY_MS = 86_400_000;

export class DailyLimits {
  private day = -1;
  private used = new Map<string, number>();
  constructor(
    private readonly now: () => number,
    public enabled: boolean,
    private readonly limits: Record<LimitKind, number> = DISCOVERY_LIMITS,
  ) {}

  /** Counts one request; returns `null` when allowed, else the Retry-After seconds. */
  take(vin: string, kind: LimitKind): number | null {
    const t = this.now();
    const day = Math.floor(t / DAY_MS);
    if (day !== this.day) {
      this.day = day;
      this.used.clear();
    }
    if (!this.enabled) return null;
    const key = `${vin}:${kind}`;
    const n = this.used.get(key) ?? 0;
    if (n >= this.limits[kind]) return Math.max(1, Math.ceil(((day + 1) * DAY_MS - t) / 1000));
    this.used.set(key, n + 1);
    return null;
  }

  usage(vin: string): Record<LimitKind, number> {
    return {
      device_data: this.used.get(`${vin}:device_data`) ?? 0,
      commands: this.used.get(`${vin}:commands`) ?? 0,
      wake: this.used.get(`${vin}:wake`) ?? 0,
      charging: this.used.get(`${vin}:charging`) ?? 0,
    };
  }

  reset(): void {
    this.used.clear();
  }
}
