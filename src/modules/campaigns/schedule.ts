/**
 * When a campaign may call: its windows are wall-clock hours on weekdays in its IANA time zone,
 * bounded by `start_at`/`end_at`. Computed with the runtime's time-zone database (Intl), so
 * daylight-saving changes move the windows with the local clock: a 09:00 window opens at 09:00
 * local time on both sides of a change.
 */
import { addDays, startOfZonedDay, wallClock, zonedDay } from '../../core/time-zones.ts';
import type { CampaignWindow } from './repository.ts';

export interface Schedule {
  timezone: string;
  windows: CampaignWindow[];
  startAt: Date | null;
  endAt: Date | null;
}

const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
const MINUTE = 60_000;

export const clockMinutes = (hhmm: string): number => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

function weekdayOf(day: string): (typeof WEEKDAYS)[number] {
  return WEEKDAYS[new Date(`${day}T00:00:00.000Z`).getUTCDay()]!;
}

/** True when the schedule lets the dialer start a call at `at`. */
export function isOpen(schedule: Schedule, at: Date): boolean {
  if (schedule.startAt && at < schedule.startAt) return false;
  if (schedule.endAt && at >= schedule.endAt) return false;
  const wall = wallClock(at, schedule.timezone);
  const pad = (n: number) => String(n).padStart(2, '0');
  const weekday = weekdayOf(`${String(wall.year).padStart(4, '0')}-${pad(wall.month)}-${pad(wall.day)}`);
  const minute = wall.hour * 60 + wall.minute;
  return schedule.windows.some((w) => w.days.includes(weekday) && clockMinutes(w.start) <= minute && minute < clockMinutes(w.end));
}

/** The instant a wall-clock minute of a day happens in a zone (the first, when the clock repeats it). */
function instantOf(day: string, minuteOfDay: number, timeZone: string): Date {
  const guess = new Date(startOfZonedDay(day, timeZone).getTime() + minuteOfDay * MINUTE);
  const wall = wallClock(guess, timeZone);
  const sameDay = zonedDay(guess, timeZone) === day;
  const reached = sameDay ? wall.hour * 60 + wall.minute : minuteOfDay + 24 * 60;
  return new Date(guess.getTime() + (minuteOfDay - reached) * MINUTE);
}

/** The schedule ended: no call may start at or after `at` ever again. */
export function hasEnded(schedule: Schedule, at: Date): boolean {
  return schedule.endAt !== null && at >= schedule.endAt;
}

/**
 * The first instant at or after `at` when the schedule is open, or null when it never opens again
 * (past `end_at`, or no window within the next eight days, which cannot happen with a valid window).
 */
export function nextOpening(schedule: Schedule, at: Date): Date | null {
  let from = at;
  if (schedule.startAt && from < schedule.startAt) from = schedule.startAt;
  if (hasEnded(schedule, from)) return null;
  if (isOpen(schedule, from)) return from;
  const today = zonedDay(from, schedule.timezone);
  for (let d = -1; d <= 8; d++) {
    const day = addDays(today, d);
    const weekday = weekdayOf(day);
    let best: Date | null = null;
    for (const window of schedule.windows) {
      if (!window.days.includes(weekday)) continue;
      let candidate = instantOf(day, clockMinutes(window.start), schedule.timezone);
      if (candidate <= from) continue;
      // A start the clock skips (a daylight-saving gap): the window opens when the clock jumps into it.
      for (let step = 0; step < 180 && !isOpen(schedule, candidate); step++) candidate = new Date(candidate.getTime() + MINUTE);
      if (isOpen(schedule, candidate) && (!best || candidate < best)) best = candidate;
    }
    if (best) return best;
  }
  return null;
}
