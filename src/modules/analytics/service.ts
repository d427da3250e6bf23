import { and, eq, gte, lt, sql } from 'drizzle-orm';
import type { Static } from 'typebox';
import type { Db } from '../../db/database.ts';
import type { RequestContext } from '../../core/context.ts';
import { Errors } from '../../core/errors.ts';
import { addDays, daysBetween, isCalendarDate, isTimeZone, startOfZonedDay, zonedDay } from '../../core/time-zones.ts';
import { callRollups } from '../../db/schema/index.ts';
import { ALL_AGENTS, MINUTE_MS, floorTo } from '../calls/rollups.ts';
import { MAX_DAYS, MAX_MINUTES, type DailyMetrics, type DailyPoint, type DailyQuery } from './schemas.ts';

type Query = Static<typeof DailyQuery>;
type Point = Static<typeof DailyPoint>;
type Metrics = Static<typeof DailyMetrics>;

const invalid = (field: string, message: string) => Errors.validation(`Invalid ${field}`, [{ path: `querystring.${field}`, message }]);

function instant(value: string, field: string): Date {
  const at = new Date(value);
  if (Number.isNaN(at.getTime())) throw invalid(field, 'is not a valid date-time');
  return at;
}

const round = (value: number) => Math.round(value * 10_000) / 10_000;

/**
 * Call series from the rollups the call's final update maintains: a day series reads quarter-hour
 * buckets (at most 96 a day, whatever the number of calls) and groups them by the zone's day
 * boundaries; a minute series reads minute buckets. Every point is present, zero-filled.
 */
export class AnalyticsService {
  readonly #db: Db;
  constructor(db: Db) {
    this.#db = db;
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
    }
    const endDate = query.end_date ?? zonedDay(new Date(), tz);
    const startDate = query.start_date ?? addDays(endDate, -30);
    const days = daysBetween(startDate, endDate) + 1;
    if (days < 1) throw invalid('end_date', 'is before start_date');
    if (days > MAX_DAYS) throw invalid('end_date', `is more than ${MAX_DAYS} days after start_date`);

    const dayList = Array.from({ length: days }, (_, i) => addDays(startDate, i));
    // boundaries[i] starts dayList[i]; the last one ends the period.
    const boundaries = [...dayList, addDays(endDate, 1)].map((day) => startOfZonedDay(day, tz));
    const start = boundaries[0]!;
    const end = boundaries[boundaries.length - 1]!;
    // One array parameter (a PostgreSQL array literal); width_bucket numbers the day each bucket falls in.
    const boundaryArray = `{${boundaries.map((b) => b.toISOString()).join(',')}}`;
    const rows = await this.#db
      .select({ index: sql<number>`width_bucket(${callRollups.bucket}, ${boundaryArray}::timestamptz[])`, ...this.#sums() })
      .from(callRollups)
      .where(this.#range(orgId, agentId, 'quarter', start, end))
      .groupBy(sql`1`);
    const byIndex = new Map(rows.map((r) => [Number(r.index), r]));
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

    const rows = await this.#db
      .select({ bucket: callRollups.bucket, ...this.#sums() })
      .from(callRollups)
      .where(this.#range(orgId, agentId, 'minute', start, end))
      .groupBy(callRollups.bucket);
    const byMinute = new Map(rows.map((r) => [r.bucket.getTime(), r]));
    const daily = Array.from({ length: minutes }, (_, i) => {
      const at = start.getTime() + i * MINUTE_MS;
      return this.#point(new Date(at).toISOString(), byMinute.get(at));
    });
    return { period: { start: start.toISOString(), end: end.toISOString() }, granularity: 'minute', timezone: query.timezone, daily };
  }

  #sums() {
    return {
      calls: sql<number>`sum(${callRollups.calls})::int`,
      cost: sql<string>`sum(${callRollups.costCredits})`,
      duration: sql<number>`sum(${callRollups.durationSeconds})`,
    };
  }

  #range(orgId: string, agentId: string, grain: 'minute' | 'quarter', start: Date, end: Date) {
    return and(
      eq(callRollups.clientId, orgId), eq(callRollups.agentId, agentId), eq(callRollups.grain, grain),
      gte(callRollups.bucket, start), lt(callRollups.bucket, end),
    );
  }

  #point(date: string, row: { calls: number; cost: string; duration: number } | undefined): Point {
    return row
      ? { date, calls: row.calls, cost_credits: round(Number(row.cost)), total_duration_seconds: round(Number(row.duration)) }
      : { date, calls: 0, cost_credits: 0, total_duration_seconds: 0 };
  }
}
