import { Type } from 'typebox';
import { E164, Nullable, NullableTimestamp, PathId, Timestamp } from '../../core/schemas.ts';

import { ACTIVE_STATUSES, BILLING_STATUSES, CALL_STATUSES, CALL_TYPES, END_REASONS } from '../../core/call-enums.ts';

const CallSid = Type.String({ pattern: '^call_[A-Za-z0-9]{1,64}$', description: '`call_` + letters and digits' });
const Credits = Type.Number({ minimum: 0, maximum: 1_000_000, description: 'Credits' });

export const CallSidParams = Type.Object({ call_sid: PathId('call_ + 20 letters and digits') });

export const CostBreakdown = Type.Object(
  { stt: Credits, llm: Credits, tts: Credits, telephony: Credits, platform: Credits },
  { title: 'CostBreakdown', additionalProperties: false, description: 'Credits per component; total_cost is their sum' },
);

export const SENTIMENTS = ['positive', 'neutral', 'negative'] as const;

/** A call's post-call analysis (extensions.md §13), read with the call. */
export const CallAnalysisView = Type.Object({
  status: Type.Enum(['completed', 'failed'], { description: 'failed: the model failed or did not answer valid output twice; nothing invalid is kept' }),
  summary: Nullable(Type.String()),
  success: Nullable(Type.Boolean({ description: "Whether the call met the agent's success criteria; null without criteria" })),
  success_reason: Nullable(Type.String()),
  sentiment: Nullable(Type.Enum([...SENTIMENTS], { description: "The caller's sentiment" })),
  structured_data: Nullable(Type.Record(Type.String(), Type.Unknown(), { description: "Validates against the version's structured_data_schema" })),
  agent_version: Nullable(Type.Integer({ description: 'The agent version whose analysis settings were used' })),
  analyzed_at: Timestamp,
  error: Nullable(Type.String({ description: 'Why the analysis failed' })),
}, { title: 'CallAnalysis' });

/** The breakdown as a call shows it: what the runtime reported, and what its post-call analyses cost (extensions.md §13). */
export const CostBreakdownView = Type.Object(
  { stt: Credits, llm: Credits, tts: Credits, telephony: Credits, platform: Credits, analysis: Type.Optional({ ...Credits, description: 'Post-call analyses, each charged as its own ledger entry' }) },
  { title: 'CallCostBreakdown', additionalProperties: false, description: 'Credits per component; total_cost is their sum' },
);

const Ms = Type.Integer({ minimum: 0, maximum: 86_400_000 });

export const ToolInvocation = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    arguments: Type.Record(Type.String(), Type.Unknown(), { description: 'What the language model called it with' }),
    result: Type.Unknown({ description: "The tool's answer as given back to the language model" }),
    status: Nullable(Type.Integer({ minimum: 100, maximum: 599, description: "The webhook's HTTP status; null when it did not answer (or a built-in)" })),
    duration_ms: Ms,
  },
  {
    title: 'ToolInvocation', additionalProperties: false, description: 'On role tool turns',
    examples: [{ name: 'lookup_order', arguments: { order_id: 'A-1' }, result: { shipped: true }, status: 200, duration_ms: 180 }],
  },
);

export const TurnLatency = Type.Object(
  {
    stt_ms: Nullable(Ms),
    llm_first_token_ms: Nullable(Ms),
    tts_first_byte_ms: Nullable(Ms),
    total_ms: { ...Ms, description: "From the end of the caller's speech to the first agent audio frame sent" },
  },
  { title: 'TurnLatency', additionalProperties: false, description: 'On agent turns' },
);

export const TranscriptTurn = Type.Object(
  {
    role: Type.Enum(['agent', 'user', 'system', 'tool']),
    text: Type.String({ maxLength: 20_000 }),
    start_seconds: Type.Number({ minimum: 0 }),
    end_seconds: Type.Optional(Type.Number({ minimum: 0 })),
    interrupted: Type.Optional(Type.Boolean({ description: 'Agent turns cut by the caller (barge-in): text is what was actually played' })),
    tool: Type.Optional(ToolInvocation),
    latency: Type.Optional(TurnLatency),
  },
  { title: 'TranscriptTurn', additionalProperties: false },
);

export const CallError = Type.Object(
  {
    provider: Type.String({ minLength: 1, maxLength: 100, description: 'The provider (or part: runtime, carrier) that failed' }),
    code: Type.String({ minLength: 1, maxLength: 100, description: 'e.g. not_configured, refused, failed, no_runtime' }),
    message: Type.String({ maxLength: 2000 }),
  },
  { title: 'CallError', additionalProperties: false, description: 'Why a call ended error' },
);

/** Largest `metadata`, counted as the UTF-8 bytes of its JSON text (extensions.md §2). */
export const METADATA_MAX_BYTES = 16_384;
export const VARIABLES_MAX_KEYS = 50;

export const CallMetadata = Type.Unsafe<Record<string, unknown>>(Type.Object({}, {
  title: 'CallMetadata', additionalProperties: true,
  description: `Any JSON object of the caller's (at most ${METADATA_MAX_BYTES} bytes as JSON), stored and returned as given`,
  examples: [{ crm_id: 'lead-4711', campaign: { name: 'spring' } }],
}));

export const CallVariables = Type.Unsafe<Record<string, string>>(Type.Object({}, {
  title: 'CallVariables', maxProperties: VARIABLES_MAX_KEYS,
  propertyNames: { minLength: 1, maxLength: 64 },
  additionalProperties: Type.String({ maxLength: 4000 }),
  description: `String values for the agent's prompt (at most ${VARIABLES_MAX_KEYS} keys; names 1-64 characters, values up to 4000)`,
  examples: [{ customer_name: 'Ada', appointment: 'Tuesday 10:00' }],
}));

export const CreateCallBody = Type.Object(
  {
    agent_id: Type.String({ minLength: 1, maxLength: 64 }),
    call_type: Type.Enum([...CALL_TYPES]),
    to_number: E164,
    from_number: Type.Optional(E164),
    call_sid: Type.Optional(CallSid),
    status: Type.Optional(Type.Enum([...ACTIVE_STATUSES], { default: 'queued', description: 'Initial status (default queued)' })),
    start_time: Type.Optional(Type.String({ format: 'date-time', description: 'When the call connected (default: when it moves to in_progress)' })),
    metadata: Type.Optional(CallMetadata),
    variables: Type.Optional(CallVariables),
  },
  { title: 'CreateCallBody', additionalProperties: false },
);

export const DialCallBody = Type.Object(
  {
    agent_id: Type.String({ minLength: 1, maxLength: 64, description: 'The agent that talks to the callee' }),
    to_number: E164,
    from_phone_number_id: Type.String({ minLength: 1, maxLength: 64, description: 'An outbound number of the organization (supports_outbound)' }),
    metadata: Type.Optional(CallMetadata),
    variables: Type.Optional(CallVariables),
  },
  { title: 'DialCallBody', additionalProperties: false },
);

export const UpdateCallBody = Type.Object(
  {
    status: Type.Optional(Type.Enum([...CALL_STATUSES], { description: 'Moves forward only: queued → ringing → in_progress → a final status' })),
    start_time: Type.Optional(Type.String({ format: 'date-time' })),
    end_time: Type.Optional(Type.String({ format: 'date-time', description: 'Default: when the call reaches a final status' })),
    end_reason: Type.Optional(Type.Enum([...END_REASONS], { description: 'Only with a final status' })),
    duration_seconds: Type.Optional(Type.Number({ minimum: 0, maximum: 86_400, description: 'Default: end_time − start_time' })),
    turn_count: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000, description: 'Default: the number of transcript turns' })),
    total_cost: Type.Optional(Credits),
    cost_breakdown: Type.Optional(CostBreakdown),
    transcript: Type.Optional(Type.Array(TranscriptTurn, { maxItems: 10_000, description: 'Replaces the transcript' })),
    latency_p50_ms: Type.Optional(Nullable(Ms)),
    latency_p95_ms: Type.Optional(Nullable(Ms)),
    agent_version: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 1_000_000 }))),
    error: Type.Optional(Nullable(CallError)),
  },
  { title: 'UpdateCallBody', additionalProperties: false, minProperties: 1 },
);

/** The fields every call view has. */
const SummaryFields = {
  call_sid: Type.String(),
  to_number: Type.String(),
  from_number: Nullable(Type.String()),
  agent_id: Type.String(),
  agent_name: Nullable(Type.String()),
  client_id: Type.String(),
  call_type: Type.String(),
  status: Type.String(),
  recording_enabled: Type.Boolean(),
  total_cost: Nullable(Type.Number()),
  duration_seconds: Nullable(Type.Number()),
  turn_count: Nullable(Type.Integer()),
  created_at: Timestamp,
  updated_at: Timestamp,
  start_time: NullableTimestamp,
  end_time: NullableTimestamp,
  end_reason: Nullable(Type.String()),
  billing_status: Type.String(),
};

/**
 * A list item: the summary fields, the outcome of the post-call analysis (named as the export's
 * columns; flat scalars, as the hottest read serializes them cheaply; the full analysis is read with
 * the call), and with the list's `q` the snippet of the best matching turn.
 */
export const CallSummary = Type.Object({
  ...SummaryFields,
  analysis_status: Nullable(Type.Enum(['completed', 'failed'], { description: "The post-call analysis's status (extensions.md §13); null without one" })),
  analysis_success: Nullable(Type.Boolean({ description: "The analysis's success: null without an analysis or without success criteria" })),
  analysis_sentiment: Nullable(Type.Enum([...SENTIMENTS], { description: "The analysis's caller sentiment; null without one" })),
  snippet: Type.Optional(Type.String({ maxLength: 200, description: 'With q: up to 200 characters of the best matching turn of the transcript' })),
}, { title: 'CallSummary' });

export const Call = Type.Object({
  ...SummaryFields,
  cost_breakdown: Nullable(CostBreakdownView),
  transcript: Type.Array(TranscriptTurn),
  has_recording: Type.Boolean(),
  recording_content_type: Nullable(Type.String()),
  recording_bytes: Nullable(Type.Integer()),
  transcript_deleted_at: { ...NullableTimestamp, description: "When the organization's retention policy deleted the transcript" },
  recording_deleted_at: { ...NullableTimestamp, description: "When the organization's retention policy deleted the recording" },
  metadata: CallMetadata,
  variables: CallVariables,
  latency_p50_ms: Nullable(Type.Integer({ description: "Median of the agent turns' latency.total_ms" })),
  latency_p95_ms: Nullable(Type.Integer({ description: "95th percentile of the agent turns' latency.total_ms" })),
  agent_version: Nullable(Type.Integer({ description: 'The version of the agent the call ran (null before agent versions)' })),
  error: Nullable(CallError),
  analysis: Nullable(CallAnalysisView),
}, { title: 'Call' });

const DateOrTime = Type.String({
  pattern: '^\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,6})?)?(Z|[+-]\\d{2}:\\d{2}))?$',
  description: 'YYYY-MM-DD (UTC day) or ISO 8601 date-time',
});

/** Most `metadata.<key>` filters in one request. */
export const METADATA_FILTERS_MAX = 10;
/** `metadata.<key>`: a top-level key of 1-64 characters. */
const METADATA_FILTER_PATTERN = '^metadata\\..{1,64}$';
/** `analysis.data.<key>`: a top-level key of the analysis's structured_data (extensions.md §13). */
const ANALYSIS_DATA_FILTER_PATTERN = '^analysis\\.data\\..{1,64}$';

const Bound = (description: string) => Type.Optional(Type.Number({ minimum: 0, maximum: 1_000_000, description }));

/** The list's filters (extensions.md §4), shared with exports. */
export const CallFilterFields = {
  agent_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  status: Type.Optional(Type.Enum([...CALL_STATUSES])),
  call_type: Type.Optional(Type.Enum([...CALL_TYPES])),
  from: Type.Optional({ ...DateOrTime, description: 'Created at or after (a date: from its start, UTC)' }),
  to: Type.Optional({ ...DateOrTime, description: 'Created before (a date: up to its end, UTC)' }),
  end_reason: Type.Optional(Type.Enum([...END_REASONS])),
  billing_status: Type.Optional(Type.Enum([...BILLING_STATUSES])),
  phone_number: Type.Optional({ ...E164, description: 'The call was to or from this number (E.164)' }),
  min_duration: Bound('Seconds, at least (calls without a duration are left out)'),
  max_duration: Bound('Seconds, at most (calls without a duration are left out)'),
  min_cost: Bound('Credits, at least (calls without a cost are left out)'),
  max_cost: Bound('Credits, at most (calls without a cost are left out)'),
  has_recording: Type.Optional(Type.Boolean({ description: 'Only calls with (true) or without (false) a stored recording' })),
  campaign_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Calls placed by this campaign' })),
  agent_version: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'Calls that ran this version of their agent (best with agent_id)' })),
  'analysis.success': Type.Optional(Type.Boolean({ description: "Calls whose analysis judged them a success (true) or not (false); calls without a judgement are left out" })),
  'analysis.sentiment': Type.Optional(Type.Enum([...SENTIMENTS], { description: "Calls whose analysis found this caller sentiment" })),
  q: Type.Optional(Type.String({
    minLength: 1, maxLength: 500,
    description: 'Full-text search over the transcript (English stems, so "refunds" finds "refund"): words (all must occur), "quoted phrases", -word excludes, "or" between alternatives. Items then add `snippet`',
  })),
};

/** `metadata.<key>` query fields: a pattern, since the keys are the caller's. */
export const metadataFilterOptions = (fixedFields: number) => ({
  patternProperties: { [METADATA_FILTER_PATTERN]: Type.String({ maxLength: 500 }), [ANALYSIS_DATA_FILTER_PATTERN]: Type.String({ maxLength: 500 }) },
  maxProperties: fixedFields + 2 * METADATA_FILTERS_MAX,
  description: `\`metadata.<key>=<value>\` (different keys, at most ${METADATA_FILTERS_MAX}): the top-level key's value, as text, equals <value> exactly; `
    + `\`analysis.data.<key>=<value>\` (at most ${METADATA_FILTERS_MAX}) the same over the top-level keys of the analysis's structured_data`,
});

export const ListCallsQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 512, description: 'next_cursor of the previous page' })),
    ...CallFilterFields,
  },
  { additionalProperties: false, ...metadataFilterOptions(2 + Object.keys(CallFilterFields).length) },
);

export const RecordingStream = Type.Object({
  url: Type.String({ description: 'Signed URL, valid expires_in seconds; supports Range requests' }),
  expires_in: Type.Number(),
  content_type: Type.String(),
  filename: Type.String(),
}, { title: 'RecordingStream' });

export const SignedRecordingQuery = Type.Object({
  org: Type.String({ minLength: 1, maxLength: 64 }),
  // Text, not a coerced integer: the signature covers the exact digits the signer wrote.
  expires: Type.String({ pattern: '^[1-9][0-9]{0,12}$', description: 'Unix seconds, exactly as in the signed link' }),
  sig: Type.String({ pattern: '^[A-Za-z0-9_-]{16,128}$' }),
});
