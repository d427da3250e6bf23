import { getTableColumns, sql } from 'drizzle-orm';
import { bigint, boolean, customType, doublePrecision, index, integer, jsonb, numeric, pgTable, primaryKey, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { clientId, createdAt, updatedAt } from './columns.ts';

/** Credits: exact decimals (a call costs fractions of a credit), read as JS numbers. */
export const credits = (name: string) => numeric(name, { precision: 16, scale: 4, mode: 'number' });

const tsvector = customType<{ data: string }>({ dataType: () => 'tsvector' });

/** The text search configuration of transcripts: English stems ("refunds" finds "refund"), stop words left out. */
export const TRANSCRIPT_SEARCH_CONFIG = 'english';

export interface CostBreakdown {
  stt: number;
  llm: number;
  tts: number;
  telephony: number;
  platform: number;
  /** What the call's post-call analyses cost (extensions.md §13), each charged as its own ledger entry. */
  analysis?: number;
}

/** A call's post-call analysis (extensions.md §13): the latest one asked for, completed or failed. */
export interface CallAnalysis {
  status: 'completed' | 'failed';
  summary: string | null;
  success: boolean | null;
  success_reason: string | null;
  sentiment: 'positive' | 'neutral' | 'negative' | null;
  structured_data: Record<string, unknown> | null;
  agent_version: number | null;
  analyzed_at: string;
  error: string | null;
}

export interface TranscriptTurn {
  role: 'agent' | 'user' | 'system' | 'tool';
  text: string;
  start_seconds: number;
  end_seconds?: number;
  interrupted?: boolean;
  tool?: { name: string; arguments: Record<string, unknown>; result: unknown; status: number | null; duration_ms: number };
  latency?: { stt_ms: number | null; llm_first_token_ms: number | null; tts_first_byte_ms: number | null; total_ms: number };
}

/** Why a call ended `error` (extensions.md §10): the provider that failed, a stable code, a message for people. */
export interface CallError {
  provider: string;
  code: string;
  message: string;
}

export const calls = pgTable(
  'calls',
  {
    /** Unique within its organization only: another organization's sid must not be revealed by a conflict. */
    callSid: text('call_sid').notNull(),
    clientId: clientId(),
    /** Not a foreign key: a call's history outlives its agent (the name is copied for that reason). */
    agentId: text('agent_id').notNull(),
    agentName: text('agent_name'),
    callType: text('call_type').notNull(),
    status: text('status').notNull(),
    fromNumber: text('from_number'),
    toNumber: text('to_number').notNull(),
    recordingEnabled: boolean('recording_enabled').notNull().default(false),
    startTime: timestamp('start_time', { withTimezone: true, precision: 3 }),
    endTime: timestamp('end_time', { withTimezone: true, precision: 3 }),
    endReason: text('end_reason'),
    durationSeconds: doublePrecision('duration_seconds'),
    turnCount: integer('turn_count'),
    totalCost: credits('total_cost'),
    costBreakdown: jsonb('cost_breakdown').$type<CostBreakdown>(),
    transcript: jsonb('transcript').$type<TranscriptTurn[]>(),
    billingStatus: text('billing_status').notNull().default('pending'),
    recordingKey: text('recording_key'),
    recordingContentType: text('recording_content_type'),
    recordingBytes: bigint('recording_bytes', { mode: 'number' }),
    /** When the retention policy deleted the transcript (the row stays). */
    transcriptDeletedAt: timestamp('transcript_deleted_at', { withTimezone: true, precision: 3 }),
    /** When the retention policy deleted the recording; its routes then answer 404 `recording_deleted`. */
    recordingDeletedAt: timestamp('recording_deleted_at', { withTimezone: true, precision: 3 }),
    /** The carrier's or SIP provider's id of the call, for its webhooks (unique where set). */
    providerCallSid: text('provider_call_sid'),
    /** The caller's own JSON object (≤ 16 KB), e.g. a CRM id; returned as given. */
    metadata: jsonb('metadata').$type<Record<string, unknown>>().notNull().default({}),
    /** String values the runtime substitutes into the agent's prompt (≤ 50 keys). */
    variables: jsonb('variables').$type<Record<string, string>>().notNull().default({}),
    /** The campaign that placed the call (extensions.md §3), for the calls list's and analytics' campaign filter. */
    campaignId: text('campaign_id'),
    /** Percentiles of the agent turns' latency.total_ms, as the runtime reported them. */
    latencyP50Ms: integer('latency_p50_ms'),
    latencyP95Ms: integer('latency_p95_ms'),
    /** The agent's version the call ran (agent versions come with extensions.md §12; null until then). */
    agentVersion: integer('agent_version'),
    error: jsonb('error').$type<CallError>(),
    /** The post-call analysis (extensions.md §13); null until one ran. */
    analysis: jsonb('analysis').$type<CallAnalysis>(),
    /**
     * When a report through the API (the runtime's PATCH) gave the call its final state. Null while
     * only the platform (the carrier's status callback, a refused placement) ended it: the runtime's
     * final report is then still taken once, merged into the ended call.
     */
    finalReportAt: timestamp('final_report_at', { withTimezone: true, precision: 3 }),
    /**
     * The transcript as text-search lexemes, kept by the database with the transcript (redacted text,
     * emptied by retention), for the list's `q` (extensions.md §4). Never read back by the API.
     */
    transcriptSearch: tsvector('transcript_search').generatedAlwaysAs(sql`to_tsvector('english'::regconfig, call_transcript_search_text(transcript))`),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    primaryKey({ columns: [t.clientId, t.callSid] }),
    index('calls_client_created_idx').on(t.clientId, t.createdAt, t.callSid),
    index('calls_client_agent_created_idx').on(t.clientId, t.agentId, t.createdAt, t.callSid),
    // The active calls an organization's concurrency limit counts: a handful of rows, never its history.
    uniqueIndex('calls_provider_call_sid_key').on(t.providerCallSid).where(sql`provider_call_sid IS NOT NULL`),
    index('calls_active_idx').on(t.clientId).where(sql`status IN ('queued', 'ringing', 'in_progress')`),
    index('calls_client_campaign_created_idx').on(t.clientId, t.campaignId, t.createdAt),
    index('calls_transcript_search_idx').using('gin', t.transcriptSearch),
    // Usage analytics grouped by metadata.<key> read ended calls by the instant they count at (their start, else their creation).
    index('calls_client_counted_at_idx').on(t.clientId, sql`coalesce(${t.startTime}, ${t.createdAt})`),
  ],
);

// The search lexemes are the database's own (a generated column): select these columns, never read them back.
const { transcriptSearch: _lexemes, ...callColumns } = getTableColumns(calls);
export const CALL_COLUMNS = callColumns;
export type CallRecord = Omit<typeof calls.$inferSelect, 'transcriptSearch'>;

/**
 * Finished calls summed per bucket, written in the transaction that ends the call, so analytics
 * read a bounded number of rows whatever the number of calls. `agent_id` '*' sums every agent.
 * Grains: `minute` (minute series), `hour`, and `quarter` (15 minutes: every time zone's offset is
 * a multiple of 15 minutes, so calendar days in any zone are unions of quarters).
 */
export const callRollups = pgTable(
  'call_rollups',
  {
    clientId: clientId(),
    agentId: text('agent_id').notNull(),
    grain: text('grain').notNull(),
    bucket: timestamp('bucket', { withTimezone: true, precision: 3 }).notNull(),
    calls: integer('calls').notNull(),
    costCredits: credits('cost_credits').notNull(),
    durationSeconds: doublePrecision('duration_seconds').notNull(),
  },
  (t) => [primaryKey({ columns: [t.clientId, t.agentId, t.grain, t.bucket] })],
);

