import { sql } from 'drizzle-orm';
import { doublePrecision, integer, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';
import { clientId } from './columns.ts';
import { credits } from './calls.ts';

/**
 * Ended calls summed for usage analytics (extensions.md §5), written in the transaction of the
 * call's final report. Each call adds one row per grain and dimension: the dimension `none` (value
 * ''), `phone_number` (the organization's number of the call), `end_reason`, `campaign`,
 * `agent_version`, and the post-call analysis's `analysis_success` and `analysis_sentiment` ('' for
 * none; the analysis's transaction moves the call from '' to its values). agent, call type and status are columns of every row, so they filter and group any
 * dimension. Grains: `minute`, `quarter` (15 minutes: every zone's offset is a multiple), `hour` and
 * `day` (UTC days). `histogram` counts durations in logarithmic bins (see usage-histogram.ts); its
 * lower bound is the first bin used, so it stays as short as the durations it holds.
 * `latency_histogram` counts the agent turns' `latency.total_ms` the same way (latency bins).
 */
export const callUsageRollups = pgTable(
  'call_usage_rollups',
  {
    clientId: clientId(),
    grain: text('grain').notNull(),
    dimension: text('dimension').notNull(),
    bucket: timestamp('bucket', { withTimezone: true, precision: 3 }).notNull(),
    agentId: text('agent_id').notNull(),
    callType: text('call_type').notNull(),
    status: text('status').notNull(),
    value: text('value').notNull(),
    calls: integer('calls').notNull(),
    durationSeconds: doublePrecision('duration_seconds').notNull(),
    cost: credits('cost').notNull(),
    costStt: credits('cost_stt').notNull(),
    costLlm: credits('cost_llm').notNull(),
    costTts: credits('cost_tts').notNull(),
    costTelephony: credits('cost_telephony').notNull(),
    costPlatform: credits('cost_platform').notNull(),
    histogram: integer('histogram').array().notNull(),
    latencyHistogram: integer('latency_histogram').array().notNull().default(sql`'{}'::int[]`),
    /** Calls whose post-call analysis judged success (true or false), and those judged a success: success_rate (extensions.md §13). */
    analysisJudged: integer('analysis_judged').notNull().default(0),
    analysisSucceeded: integer('analysis_succeeded').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.clientId, t.grain, t.dimension, t.bucket, t.agentId, t.callType, t.status, t.value] })],
);
