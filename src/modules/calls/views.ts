import type { Static } from 'typebox';
import { iso } from '../../core/schemas.ts';
import type { CallRow } from './repository.ts';
import { FINAL_STATUSES } from '../../core/call-enums.ts';
import type { Call, CallSummary } from './schemas.ts';

type CallSummaryView = Static<typeof CallSummary>;
type CallView = Static<typeof Call>;

export function isFinal(status: string): boolean {
  return (FINAL_STATUSES as readonly string[]).includes(status);
}

/** Position on the way queued → ringing → in_progress → final; a call only moves forward. */
export function statusStage(status: string): number {
  if (isFinal(status)) return 3;
  return ({ queued: 0, ringing: 1, in_progress: 2 } as Record<string, number>)[status] ?? 0;
}

export function toCallSummary(row: CallRow): CallSummaryView {
  return {
    call_sid: row.callSid, to_number: row.toNumber, from_number: row.fromNumber, agent_id: row.agentId,
    agent_name: row.agentName, client_id: row.clientId, call_type: row.callType, status: row.status,
    recording_enabled: row.recordingEnabled, total_cost: row.totalCost, duration_seconds: row.durationSeconds,
    turn_count: row.turnCount, created_at: iso(row.createdAt), updated_at: iso(row.updatedAt),
    start_time: iso(row.startTime), end_time: iso(row.endTime), end_reason: row.endReason, billing_status: row.billingStatus,
    analysis_status: row.analysis?.status ?? null, analysis_success: row.analysis?.success ?? null, analysis_sentiment: row.analysis?.sentiment ?? null,
  };
}

export function toCall(row: CallRow): CallView {
  // The call has the whole analysis, so not the list's outcome fields.
  const { analysis_status: _status, analysis_success: _success, analysis_sentiment: _sentiment, ...summary } = toCallSummary(row);
  return {
    ...summary,
    cost_breakdown: row.costBreakdown,
    transcript: row.transcript ?? [],
    has_recording: row.recordingKey !== null,
    recording_content_type: row.recordingContentType,
    recording_bytes: row.recordingBytes,
    transcript_deleted_at: iso(row.transcriptDeletedAt),
    recording_deleted_at: iso(row.recordingDeletedAt),
    metadata: row.metadata,
    variables: row.variables,
    latency_p50_ms: row.latencyP50Ms,
    latency_p95_ms: row.latencyP95Ms,
    agent_version: row.agentVersion,
    error: row.error,
    analysis: row.analysis,
  };
}
