import { sql } from 'drizzle-orm';
import { index, integer, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { clientId, createdAt } from './columns.ts';

const at = (name: string) => timestamp(name, { withTimezone: true, precision: 3 });

/**
 * One requested analysis of a call at an agent version (extensions.md §13): the unit the
 * `call-analysis` job works and the source of its ledger entry. The analysis a call's end asks for
 * is unique per call and version (a second end path, a late report, finds it there), so however
 * often the job is retried or the end reported, the call is analyzed and charged once; a rerun or a
 * bulk rerun is a run of its own.
 */
export const callAnalysisRuns = pgTable(
  'call_analysis_runs',
  {
    id: text('id').notNull(),
    clientId: clientId(),
    callSid: text('call_sid').notNull(),
    agentVersion: integer('agent_version'),
    /** `call_end`, `rerun` or `bulk`. */
    trigger: text('trigger').notNull(),
    /** The bulk rerun (`POST /api/calls/analyze`) that asked for it. */
    batchId: text('batch_id'),
    /** pending → completed | failed (the LLM's answer or its failure is on the call). */
    status: text('status').notNull().default('pending'),
    createdAt: createdAt(),
    completedAt: at('completed_at'),
  },
  (t) => [
    primaryKey({ columns: [t.clientId, t.id] }),
    uniqueIndex('call_analysis_runs_end_key').on(t.clientId, t.callSid, t.agentVersion).where(sql`trigger = 'call_end'`),
    uniqueIndex('call_analysis_runs_batch_key').on(t.clientId, t.batchId, t.callSid).where(sql`batch_id IS NOT NULL`),
  ],
);

/**
 * A bulk rerun over the calls list's filters (`POST /api/calls/analyze`): the `call-analysis-batch`
 * job adds one run per matching call with a transcript; its progress is counted from those runs.
 */
export const callAnalysisBatches = pgTable(
  'call_analysis_batches',
  {
    id: text('id').notNull(),
    clientId: clientId(),
    /** The list's filter fields as the request gave them. */
    filters: jsonb('filters').$type<Record<string, unknown>>().notNull(),
    agentVersion: integer('agent_version'),
    /** pending (calls being gathered) → running (every run queued) → completed. */
    status: text('status').notNull().default('pending'),
    /** Calls gathered so far (final once running). */
    total: integer('total').notNull().default(0),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.clientId, t.id] }), index('call_analysis_batches_created_idx').on(t.createdAt)],
);
