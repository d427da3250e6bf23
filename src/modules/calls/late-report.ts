import type { UsageCall } from '../analytics/service.ts';
import { Errors } from '../../core/errors.ts';
import { roundCredits } from '../../core/credits.ts';
import { parseInstant } from '../../core/time-zones.ts';
import type { CallRow, CostBreakdown, NewCallRow } from './repository.ts';
import type { UpdateCallBody } from './schemas.ts';
import type { Static } from 'typebox';
import { isFinal } from './views.ts';

type UpdateInput = Static<typeof UpdateCallBody>;

export function totalOf(breakdown: CostBreakdown): number {
  return roundCredits(breakdown.stt + breakdown.llm + breakdown.tts + breakdown.telephony + breakdown.platform);
}

/** The cost fields of a report: the breakdown's sum is the total, and a total given must be that sum. */
export function costChanges(input: UpdateInput): Pick<Partial<NewCallRow>, 'costBreakdown' | 'totalCost'> {
  if (input.cost_breakdown !== undefined) {
    const total = totalOf(input.cost_breakdown);
    if (input.total_cost !== undefined && Math.abs(roundCredits(input.total_cost) - total) > 0.0001) {
      throw Errors.validation('total_cost is not the sum of cost_breakdown', [{ path: 'body.total_cost', message: `must equal the breakdown's sum (${total})` }]);
    }
    return { costBreakdown: input.cost_breakdown, totalCost: total };
  }
  return input.total_cost !== undefined ? { totalCost: roundCredits(input.total_cost) } : {};
}

/** A call that ended, as the analytics count it (its agent turns' total_ms are the latency population). */
export function usageOf(call: CallRow): UsageCall {
  return {
    agentId: call.agentId, at: call.startTime ?? call.createdAt, cost: call.totalCost ?? 0, durationSeconds: call.durationSeconds ?? 0,
    callType: call.callType, status: call.status, endReason: call.endReason, campaignId: call.campaignId, agentVersion: call.agentVersion,
    phoneNumber: call.callType === 'outbound' ? call.fromNumber : call.toNumber, breakdown: call.costBreakdown,
    latenciesMs: (call.transcript ?? []).flatMap((turn) => (turn.role === 'agent' && typeof turn.latency?.total_ms === 'number' ? [turn.latency.total_ms] : [])),
    analysisSuccess: call.analysis?.success ?? null, analysisSentiment: call.analysis?.sentiment ?? null,
  };
}

/**
 * The changes of the runtime's report of a call the platform already ended (the carrier's status
 * callback came first, extensions.md §10: "may arrive in any order; the call keeps what each
 * reported"). What the runtime reported replaces what the carrier's callback set, as it would have
 * had it come first: its final status and end reason, times, duration, transcript, costs, latency,
 * error. A report without a final status (a turn that was still on its way) keeps the status.
 */
export function lateReportChanges(current: CallRow, input: UpdateInput): Partial<NewCallRow> {
  const changes: Partial<NewCallRow> = { ...costChanges(input) };
  // What analyses cost was charged on its own (extensions.md §13): the runtime's costs replace the rest.
  const analysis = current.costBreakdown?.analysis ?? 0;
  if (analysis > 0 && changes.costBreakdown) changes.costBreakdown = { ...changes.costBreakdown, analysis };
  if (analysis > 0 && typeof changes.totalCost === 'number') changes.totalCost = roundCredits(changes.totalCost + analysis);
  const final = input.status !== undefined && isFinal(input.status);
  if (input.end_reason !== undefined && !final) {
    throw Errors.validation('end_reason is only given with a final status', [{ path: 'body.end_reason', message: 'needs a final status' }]);
  }
  if (final) {
    changes.status = input.status;
    changes.endReason = input.end_reason ?? current.endReason;
    changes.finalReportAt = new Date();
  }
  const startTime = input.start_time !== undefined ? parseInstant(input.start_time, 'body.start_time') : current.startTime;
  const endTime = input.end_time !== undefined ? parseInstant(input.end_time, 'body.end_time') : current.endTime;
  if (startTime && endTime && endTime < startTime) {
    throw Errors.validation('end_time is before start_time', [{ path: 'body.end_time', message: 'must not be before start_time' }]);
  }
  changes.startTime = startTime;
  changes.endTime = endTime;
  if (input.duration_seconds !== undefined) changes.durationSeconds = input.duration_seconds;
  else if ((input.start_time !== undefined || input.end_time !== undefined) && startTime && endTime) {
    changes.durationSeconds = Math.round(endTime.getTime() - startTime.getTime()) / 1000;
  }
  if (input.transcript !== undefined) changes.transcript = input.transcript;
  if (input.turn_count !== undefined) changes.turnCount = input.turn_count;
  else if (input.transcript !== undefined) changes.turnCount = input.transcript.length;
  if (input.latency_p50_ms !== undefined) changes.latencyP50Ms = input.latency_p50_ms;
  if (input.latency_p95_ms !== undefined) changes.latencyP95Ms = input.latency_p95_ms;
  if (input.agent_version !== undefined) changes.agentVersion = input.agent_version;
  if (input.error !== undefined) changes.error = input.error;
  return changes;
}
