/**
 * Calendar days in IANA time zones, computed with the runtime's own time-zone database (Intl),
 * so the server and its tests agree on every offset and DST change.
 */
import { Errors } from './errors.ts';

const formats = new Map<string, Intl.DateTimeFormat>();

function format(timeZone: string): Intl.DateTimeFormat {
  let found = formats.get(timeZone);
  if (!found) {
    found = new Intl.DateTimeFormat('en-US', {
      timeZone, hourCycle: 'h23', era: 'short', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit',
    });
    formats.set(timeZone, found);
  }
  return found;
}

export function isTimeZone(name: string): boolean {
  if (name.length > 64) return false;
  try {
    format(name);
    return true;
  } catch {
    return false;
  }
}

export function wallClock(at: Date, timeZone: string): { year: number; month: number; day: number; hour: number; minute: number; second: number } {
  const parts: Record<string, number> = {};
  let beforeCommonEra = false;
  for (const part of format(timeZone).formatToParts(at)) {
    if (part.type === 'era') beforeCommonEra = part.value === 'BC';
    else if (part.type !== 'literal') parts[part.type] = Number(part.value);
  }
  // Intl counts years 1 BC, 2 BC...; the astronomical years are 0, -1...
  const year = beforeCommonEra ? 1 - parts.year! : parts.year!;
  return { year, month: parts.month!, day: parts.day!, hour: parts.hour!, minute: parts.minute!, second: parts.second! };
}

/** A UTC wall-clock time in epoch milliseconds. Not Date.UTC, which reads years 0 to 99 as 1900 to 1999. */
function utcMs(year: number, month: number, day: number, hour = 0, minute = 0, second = 0): number {
  const at = new Date(0);
  at.setUTCFullYear(year, month - 1, day);
  at.setUTCHours(hour, minute, second, 0);
  return at.getTime();
}

/** Milliseconds the zone's wall clock is ahead of UTC at `at`. */
function offsetMs(at: Date, timeZone: string): number {
  const w = wallClock(at, timeZone);
  return utcMs(w.year, w.month, w.day, w.hour, w.minute, w.second) - Math.floor(at.getTime() / 1000) * 1000;
}

/** The calendar day (`YYYY-MM-DD`) of an instant in a zone. */
export function zonedDay(at: Date, timeZone: string): string {
  const w = wallClock(at, timeZone);
  return `${String(w.year).padStart(4, '0')}-${String(w.month).padStart(2, '0')}-${String(w.day).padStart(2, '0')}`;
}

/** The instant a calendar day starts in a zone (its first existing moment, if midnight is skipped). */
export function startOfZonedDay(day: string, timeZone: string): Date {
  const [year, month, date] = day.split('-').map(Number) as [number, number, number];
  const wallMidnight = utcMs(year, month, date);
  let utc = wallMidnight - offsetMs(new Date(wallMidnight), timeZone);
  utc = wallMidnight - offsetMs(new Date(utc), timeZone); // the offset may differ at the true instant (DST)
  return new Date(utc);
}

/** A real calendar date in `YYYY-MM-DD`. */
export function isCalendarDate(value: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  const at = new Date(`${value}T00:00:00.000Z`);
  return !Number.isNaN(at.getTime()) && at.toISOString().slice(0, 10) === value;
}

/** `day` moved by whole calendar days. */
export function addDays(day: string, days: number): string {
  return new Date(Date.parse(`${day}T00:00:00.000Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

export function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00.000Z`) - Date.parse(`${from}T00:00:00.000Z`)) / 86_400_000);
}

/** The instants the API accepts: years 0001 to 9999 (JavaScript and PostgreSQL both go further, but not equally far). */
const FIRST_INSTANT = Date.parse('0001-01-01T00:00:00.000Z');
const LAST_INSTANT = Date.parse('9999-12-31T23:59:59.999Z');

export function isStorableInstant(at: Date): boolean {
  const time = at.getTime();
  return !Number.isNaN(time) && time >= FIRST_INSTANT && time <= LAST_INSTANT;
}

/** An ISO 8601 instant from a request, or 400 naming the field (`body.end_time`, `querystring.from`...). */
export function parseInstant(value: string, path: string): Date {
  const at = new Date(value);
  if (Number.isNaN(at.getTime())) throw Errors.validation(`Invalid ${path}`, [{ path, message: 'is not a valid date-time' }]);
  if (!isStorableInstant(at)) throw Errors.validation(`Invalid ${path}`, [{ path, message: 'is out of range (years 0001 to 9999)' }]);
  return at;
}
