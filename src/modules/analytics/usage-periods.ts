import { Errors } from '../../core/errors.ts';
import { addDays, isStorableInstant, startOfZonedDay, wallClock, zonedDay } from '../../core/time-zones.ts';

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

/** Rollup grains of usage analytics, coarsest first (a `day` is a UTC day). */
export const GRAINS_MS = { day: DAY_MS, hour: HOUR_MS, quarter: 15 * MINUTE_MS, minute: MINUTE_MS } as const;
export type UsageGrain = keyof typeof GRAINS_MS;

export const GRANULARITIES = ['minute', 'hour', 'day', 'week', 'month'] as const;
export type Granularity = (typeof GRANULARITIES)[number];

/** extensions.md §5: the longest period of each granularity. */
export const MAX_PERIOD_MS: Record<Granularity, number> = {
  minute: 48 * HOUR_MS, hour: 31 * DAY_MS, day: 366 * DAY_MS, week: 5 * 366 * DAY_MS, month: 5 * 366 * DAY_MS,
};

const invalid = (field: string, message: string) => Errors.validation(`Invalid ${field}`, [{ path: `querystring.${field}`, message }]);

/** Monday = 0 of a calendar day. */
const weekday = (day: string) => (new Date(`${day}T00:00:00.000Z`).getUTCDay() + 6) % 7;

/** The instant a wall-clock hour starts, found among quarter hours (offsets are multiples of 15 minutes). */
function hourBoundaries(start: Date, end: Date, tz: string): Date[] {
  const aligned = (at: Date) => wallClock(at, tz).minute === 0;
  const whole = (at: Date) => aligned(new Date(Math.floor(at.getTime() / HOUR_MS) * HOUR_MS));
  const out: Date[] = [];
  if (whole(start) && whole(end)) {
    // Whole-hour offsets at both ends (nearly every zone): the zone's hours are UTC hours.
    for (let t = Math.floor(start.getTime() / HOUR_MS) * HOUR_MS; ; t += HOUR_MS) {
      out.push(new Date(t));
      if (t >= end.getTime()) return out;
    }
  }
  const quarter = GRAINS_MS.quarter;
  let t = Math.floor(start.getTime() / quarter) * quarter;
  while (!aligned(new Date(t))) t -= quarter;
  for (; ; t += quarter) {
    if (!aligned(new Date(t))) continue;
    out.push(new Date(t));
    if (t >= end.getTime()) return out;
  }
}

/** Calendar boundaries from the day `first` on, each `next` of the previous, until one reaches `end`. */
function dayBoundaries(first: string, next: (day: string) => string, end: Date, tz: string): Date[] {
  const out: Date[] = [];
  for (let day = first; ; day = next(day)) {
    const at = /^\d{4}-/.test(day) ? startOfZonedDay(day, tz) : new Date(Number.NaN);
    // The bucket after year 9999's last begins past the instants the API keeps.
    if (!isStorableInstant(at)) throw invalid('end', 'is out of range');
    out.push(at);
    if (at >= end) return out;
  }
}

/**
 * The buckets of a period in a zone: boundaries[i] starts point i, the last one ends the period.
 * The first bucket is the one holding `start`, the last the one holding the instant before `end`.
 */
export function bucketBoundaries(granularity: Granularity, start: Date, end: Date, tz: string): Date[] {
  if (end <= start) throw invalid('end', 'is not after start');
  if (end.getTime() - start.getTime() > MAX_PERIOD_MS[granularity]) throw invalid('end', `is too far after start for granularity ${granularity}`);
  let boundaries: Date[];
  if (granularity === 'minute') {
    boundaries = [];
    for (let t = Math.floor(start.getTime() / MINUTE_MS) * MINUTE_MS; ; t += MINUTE_MS) {
      boundaries.push(new Date(t));
      if (t >= end.getTime()) break;
    }
  } else if (granularity === 'hour') {
    boundaries = hourBoundaries(start, end, tz);
  } else {
    const startDay = zonedDay(start, tz);
    const first = granularity === 'day' ? startDay : granularity === 'week' ? addDays(startDay, -weekday(startDay)) : `${startDay.slice(0, 8)}01`;
    const next = granularity === 'day' ? (d: string) => addDays(d, 1) : granularity === 'week' ? (d: string) => addDays(d, 7) : nextMonth;
    boundaries = dayBoundaries(first, next, end, tz);
    // The start of the first day may fall after `start` when midnight was skipped; it still holds it.
    if (boundaries[0]! > start) boundaries[0] = startOfZonedDay(first, tz);
  }
  if (!boundaries.every(isStorableInstant)) throw invalid('end', 'is out of range');
  return boundaries;
}

function nextMonth(day: string): string {
  const year = Number(day.slice(0, 4));
  const month = Number(day.slice(5, 7));
  return month === 12 ? `${String(year + 1).padStart(4, '0')}-01-01` : `${day.slice(0, 4)}-${String(month + 1).padStart(2, '0')}-01`;
}

/** The coarsest rollup grain every boundary is a multiple of (UTC days, hours, quarters, minutes). */
export function grainFor(boundaries: Date[]): UsageGrain {
  for (const [grain, step] of Object.entries(GRAINS_MS) as Array<[UsageGrain, number]>) {
    if (boundaries.every((b) => b.getTime() % step === 0)) return grain;
  }
  return 'minute';
}
