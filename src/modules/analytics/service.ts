import type { Database, Executor } from '../../db/database.ts';
import type { Static } from 'typebox';
import type { RequestContext } from '../../core/context.ts';
import { Errors } from '../../core/errors.ts';
import { addDays, daysBetween, isCalendarDate, isStorableInstant, isTimeZone, parseInstant, startOfZonedDay, zonedDay } from '../../core/time-zones.ts';
import { roundCredits } from '../../core/credits.ts';
import { ALL_AGENTS, HOUR_MS, MINUTE_MS, floorTo } from './rollups.ts';
import { addCallToRollups, addCallToUsage, type UsageCall } from './rollup-queries.ts';
import { daySums, minuteSums, type Sums } from './daily-queries.ts';
import { UsageAnalytics } from './usage.ts';
import type { UsageQuery } from './usage-schemas.ts';
import { MAX_DAYS, MAX_MINUTES, type DailyMetrics, type DailyPoint, type DailyQuery } from './schemas.ts';

/** A call as usage analytics count it, built by the calls module at its final report. */
export type { UsageCall } from './rollup-queries.ts';

type Query = Static<typeof DailyQuery>;
type Point = Static<typeof DailyPoint>;
type Metrics = Static<typeof DailyMetrics>;

/** The days a series may cover: the API's years 0001 to 9999, less the last day, whose end is past 9999. */
const FIRST_DAY = '0001-01-01';
const LAST_DAY = '9999-12-31';

const invalid = (field: string, message: string) => Errors.validation(`Invalid ${field}`, [{ path: `querystring.${field}`, message }]);

const instant = (value: string, field: string) => parseInstant(value, `querystring.${field}`);

/**
 * Call series from the rollups the call's final update maintains: a day series reads hour or
 * quarter-hour buckets (at most 24 or 96 a day, whatever the number of calls) and groups them by the zone's day
 * boundaries; a minute series reads minute buckets. Every point is present, zero-filled.
 */
export class AnalyticsService {
  readonly #database: Pick<Database, 'prepared' | 'planned'>;
  readonly #usage: UsageAnalytics;
  constructor(deps: { database: Pick<Database, 'prepared' | 'planned'> }) {
    this.#database = deps.database;
    this.#usage = new UsageAnalytics(deps.database);
  }

  /** Counts a call that ended into the rollups, in the caller's transaction (the call's final update). */
  async recordEndedCall(within: Executor, orgId: string, call: UsageCall): Promise<void> {
    await addCallToRollups(within, orgId, call);
    await addCallToUsage(within, orgId, call);
  }

  /**
   * Replaces a counted call by what a late report made of it (its status, cost, duration or turn
   * latencies changed), in the caller's transaction: its previous contribution is taken back, the
   * new one added, so the call still counts once.
   */
  async replaceEndedCall(within: Executor, orgId: string, before: UsageCall, after: UsageCall): Promise<void> {
    await addCallToRollups(within, orgId, before, -1);
    await addCallToUsage(within, orgId, before, -1);
    await this.recordEndedCall(within, orgId, after);
  }

  /** GET /api/analytics/usage (extensions.md §5). */
  usage(ctx: RequestContext, query: Static<typeof UsageQuery>) {
    return this.#usage.report(ctx.orgId, query);
  }

  async daily(ctx: RequestContext, query: Query): Promise<Metrics> {
    if (!isTimeZone(query.timezone)) throw invalid('timezone', 'is not an IANA time zone');
    const agentId = query.agent_id ?? ALL_AGENTS;
    if (query.start_time !== undefined) return this.#minutes(ctx.orgId, agentId, query);
    if (query.end_time !== undefined) throw invalid('end_time', 'is only used with start_time');
    return this.#days(ctx.orgId, agentId, query);
  }

  async #days(orgId: string, agentId: string, query: Query): Promise<Metrics> {
    const tz = query.timezone;
    for (const field of ['start_date', 'end_date'] as const) {
      if (query[field] !== undefined && !isCalendarDate(query[field])) throw invalid(field, 'is not a calendar date');
      // A day series ends the day after end_date: it must still be a date of the API's range.
      if (query[field] !== undefined && (query[field] < FIRST_DAY || query[field] >= LAST_DAY)) {
        throw invalid(field, `is out of range (${FIRST_DAY} to the day before ${LAST_DAY})`);
      }
    }
    const endDate = query.end_date ?? zonedDay(new Date(), tz);
    const startDate = query.start_date ?? addDays(endDate, -30);
    if (startDate < FIRST_DAY) throw invalid('end_date', `is too early for the default period (30 days before it start before ${FIRST_DAY}): give start_date`);
    const days = daysBetween(startDate, endDate) + 1;
    if (days < 1) throw invalid('end_date', 'is before start_date');
    if (days > MAX_DAYS) throw invalid('end_date', `is more than ${MAX_DAYS} days after start_date`);

    const dayList = Array.from({ length: days }, (_, i) => addDays(startDate, i));
    // boundaries[i] starts dayList[i]; the last one ends the period.
    const boundaries = [...dayList, addDays(endDate, 1)].map((day) => startOfZonedDay(day, tz));
    const start = boundaries[0]!;
    const end = boundaries[boundaries.length - 1]!;
    // The zone's offset can move the first day's start out of the years the database compares alike.
    if (!isStorableInstant(start)) throw invalid(query.start_date === undefined ? 'end_date' : 'start_date', `starts before ${FIRST_DAY} in ${tz}`);
    // Hours when every day starts on the hour (most zones), quarter hours otherwise: fewer rows, same sums.
    const grain = boundaries.every((b) => b.getTime() % HOUR_MS === 0) ? 'hour' : 'quarter';
    // One array parameter (a PostgreSQL array literal); width_bucket numbers the day each bucket falls in.
    const boundaryArray = `{${boundaries.map((b) => b.toISOString()).join(',')}}`;
    const rows = await daySums(this.#database, orgId, agentId, grain, start, end, boundaryArray);
    const byIndex = new Map(rows.map((r) => [r.key, r]));
    const daily = dayList.map((date, i) => this.#point(date, byIndex.get(i + 1)));
    return { period: { start: start.toISOString(), end: end.toISOString() }, granularity: 'day', timezone: tz, daily };
  }

  async #minutes(orgId: string, agentId: string, query: Query): Promise<Metrics> {
    if (query.start_date !== undefined || query.end_date !== undefined) {
      throw invalid('start_time', 'give either dates (days) or times (minutes), not both');
    }
    const start = floorTo(instant(query.start_time!, 'start_time'), MINUTE_MS);
    const now = Date.now();
    const defaultEnd = Math.min(start.getTime() + MAX_MINUTES * MINUTE_MS, Math.max(now, start.getTime() + MINUTE_MS));
    const endInstant = query.end_time !== undefined ? instant(query.end_time, 'end_time') : new Date(defaultEnd);
    const end = new Date(Math.ceil(endInstant.getTime() / MINUTE_MS) * MINUTE_MS);
    const minutes = (end.getTime() - start.getTime()) / MINUTE_MS;
    if (minutes < 1) throw invalid('end_time', 'is not after start_time');
    if (minutes > MAX_MINUTES) throw invalid('end_time', 'is more than 24 hours after start_time');

    const rows = await minuteSums(this.#database, orgId, agentId, start, end);
    const byMinute = new Map(rows.map((r) => [r.key, r]));
    const daily = Array.from({ length: minutes }, (_, i) => {
      const at = start.getTime() + i * MINUTE_MS;
      return this.#point(new Date(at).toISOString(), byMinute.get(at));
    });
    return { period: { start: start.toISOString(), end: end.toISOString() }, granularity: 'minute', timezone: query.timezone, daily };
  }

  #point(date: string, row: Sums | undefined): Point {
    return row
      ? { date, calls: row.calls, cost_credits: roundCredits(row.cost), total_duration_seconds: roundCredits(row.duration) }
      : { date, calls: 0, cost_credits: 0, total_duration_seconds: 0 };
  }
}
