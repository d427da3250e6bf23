import type { Database } from '../../db/database.ts';

/** One point's sums of the daily series, from call_rollups. */
export interface Sums {
  /** The day's index (width_bucket, from 1) or the minute's epoch milliseconds. */
  key: number;
  calls: number;
  cost: number;
  duration: number;
}

const SUMS = 'sum(calls)::int AS calls, sum(cost_credits)::float8 AS cost, sum(duration_seconds) AS duration';
const RANGE = 'client_id = $1 AND agent_id = $2 AND grain = $3 AND bucket >= $4 AND bucket < $5';

// Plain SQL as named prepared statements: the series are read often and their plans never change.

/**
 * The sums per day of the agent's (or the organization's: ALL_AGENTS) buckets of `grain` in
 * [start, end), keyed by the day each bucket falls in: `boundaries` is one PostgreSQL array literal
 * of the days' starts and the period's end, and width_bucket numbers the day from 1.
 */
export function daySums(
  database: Pick<Database, 'prepared'>, orgId: string, agentId: string, grain: 'hour' | 'quarter', start: Date, end: Date, boundaries: string,
): Promise<Sums[]> {
  return database.prepared<Sums>('analytics_days', `SELECT width_bucket(bucket, $6::timestamptz[]) AS key, ${SUMS}
      FROM call_rollups WHERE ${RANGE} GROUP BY 1`, [orgId, agentId, grain, start, end, boundaries]);
}

/** The minute buckets in [start, end), keyed by their epoch milliseconds: one row per minute already, no grouping. */
export function minuteSums(database: Pick<Database, 'prepared'>, orgId: string, agentId: string, start: Date, end: Date): Promise<Sums[]> {
  return database.prepared<Sums>('analytics_minutes', `SELECT date_part('epoch', bucket) * 1000 AS key,
      calls, cost_credits::float8 AS cost, duration_seconds AS duration FROM call_rollups WHERE ${RANGE}`, [orgId, agentId, 'minute', start, end]);
}
