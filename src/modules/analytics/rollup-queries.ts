import { and, eq, inArray, sql } from 'drizzle-orm';
import type { Executor } from '../../db/database.ts';
import { callRollups } from '../../db/schema/index.ts';
import { GRAINS_MS } from './usage-periods.ts';
import { binOf, durationBin, LATENCY_SCALE } from './usage-histogram.ts';
import { ALL_AGENTS, floorTo, GRAINS } from './rollups.ts';

/**
 * What a call that ended adds to the two rollups, in the caller's transaction (the call's final
 * report): call_rollups (the daily series) and call_usage_rollups (usage analytics). With `sign` -1
 * each takes back what adding the same call put there (a late report replaces it).
 */

/** A finished call as the daily series count it. */
export interface EndedCall {
  agentId: string;
  /** When it started (its creation when it never connected): the bucket it counts in. */
  at: Date;
  cost: number;
  durationSeconds: number;
}

/** Adds the call to its agent's and the organization's rollups, per minute, quarter hour and hour. */
export async function addCallToRollups(db: Executor, orgId: string, call: EndedCall, sign: 1 | -1 = 1): Promise<void> {
  const rows = [];
  for (const agentId of [call.agentId, ALL_AGENTS]) {
    for (const [grain, step] of Object.entries(GRAINS)) {
      rows.push({ clientId: orgId, agentId, grain, bucket: floorTo(call.at, step), calls: sign, costCredits: sign * call.cost, durationSeconds: sign * call.durationSeconds });
    }
  }
  await db
    .insert(callRollups)
    .values(rows)
    .onConflictDoUpdate({
      target: [callRollups.clientId, callRollups.agentId, callRollups.grain, callRollups.bucket],
      set: {
        calls: sql`${callRollups.calls} + excluded.calls`,
        costCredits: sql`${callRollups.costCredits} + excluded.cost_credits`,
        durationSeconds: sql`${callRollups.durationSeconds} + excluded.duration_seconds`,
      },
    });
  if (sign < 0) {
    const buckets = Object.values(GRAINS).map((step) => floorTo(call.at, step));
    await db.delete(callRollups).where(and(eq(callRollups.clientId, orgId), eq(callRollups.calls, 0), inArray(callRollups.bucket, buckets)));
  }
}

/** A call that ended, as usage analytics count it. */
export interface UsageCall {
  agentId: string;
  callType: string;
  status: string;
  endReason: string | null;
  /** The organization's number of the call: the called number inbound, the caller's outbound. */
  phoneNumber: string | null;
  campaignId: string | null;
  /** The version of its agent the call ran (null: unknown). */
  agentVersion: number | null;
  /** Its start, else its creation: the bucket it counts in. */
  at: Date;
  durationSeconds: number;
  cost: number;
  breakdown: { stt: number; llm: number; tts: number; telephony: number; platform: number } | null;
  /** Its agent turns' `latency.total_ms`: the population of the latency percentiles. */
  latenciesMs: number[];
  /** Its post-call analysis's judgement and caller sentiment (null: none yet, or failed). */
  analysisSuccess: boolean | null;
  analysisSentiment: string | null;
}

/**
 * The turn latencies as counts per latency bin, index bin + 1 (a 1-based array from bin 0), times
 * `sign`: added element by element to a rollup row's `latency_histogram`.
 */
function latencyCounts(latenciesMs: number[], sign: 1 | -1): number[] {
  const counts: number[] = [];
  for (const ms of latenciesMs) {
    const bin = binOf(ms, LATENCY_SCALE);
    while (counts.length <= bin) counts.push(0);
    counts[bin]! += sign;
  }
  return counts;
}

export const USAGE_DIMENSIONS = ['none', 'phone_number', 'end_reason', 'campaign', 'agent_version', 'analysis_success', 'analysis_sentiment'] as const;
export type UsageDimension = (typeof USAGE_DIMENSIONS)[number];

/**
 * Adds the call to every grain and dimension in one statement, in the caller's transaction (the
 * call's final report): a row is created or its sums grow, and the duration's bin counts one more.
 * With `sign` -1 it takes back what adding the same call put there (a late report replaces it).
 */
export async function addCallToUsage(db: Executor, orgId: string, call: UsageCall, sign: 1 | -1 = 1): Promise<void> {
  const values: Record<UsageDimension, string> = { none: '', phone_number: call.phoneNumber ?? '', end_reason: call.endReason ?? '', campaign: call.campaignId ?? '',
    agent_version: call.agentVersion === null ? '' : String(call.agentVersion),
    analysis_success: call.analysisSuccess === null ? '' : String(call.analysisSuccess), analysis_sentiment: call.analysisSentiment ?? '' };
  const judged = sign * (call.analysisSuccess === null ? 0 : 1);
  const succeeded = sign * (call.analysisSuccess === true ? 1 : 0);
  const b = call.breakdown ?? { stt: 0, llm: 0, tts: 0, telephony: 0, platform: 0 };
  const bin = durationBin(call.durationSeconds);
  const latency = `{${latencyCounts(call.latenciesMs, sign).join(',')}}`;
  const rows = [];
  for (const [grain, step] of Object.entries(GRAINS_MS)) {
    const bucket = floorTo(call.at, step).toISOString();
    for (const dimension of Object.keys(values) as UsageDimension[]) {
      rows.push(sql`(${orgId}, ${grain}, ${dimension}, ${bucket}::timestamptz, ${call.agentId}, ${call.callType}, ${call.status}, ${values[dimension]}, ${sign}::int,
        ${sign * call.durationSeconds}::float8, ${sign * call.cost}::numeric, ${sign * b.stt}::numeric, ${sign * b.llm}::numeric, ${sign * b.tts}::numeric,
        ${sign * b.telephony}::numeric, ${sign * b.platform}::numeric, ${`[${bin}:${bin}]={${sign}}`}::int[], ${latency}::int[], ${judged}::int, ${succeeded}::int)`);
    }
  }
  const u = sql.raw('call_usage_rollups');
  await db.execute(sql`INSERT INTO call_usage_rollups (client_id, grain, dimension, bucket, agent_id, call_type, status, value, calls,
      duration_seconds, cost, cost_stt, cost_llm, cost_tts, cost_telephony, cost_platform, histogram, latency_histogram, analysis_judged, analysis_succeeded)
    VALUES ${sql.join(rows, sql`, `)}
    ON CONFLICT (client_id, grain, dimension, bucket, agent_id, call_type, status, value) DO UPDATE SET
      calls = ${u}.calls + excluded.calls, duration_seconds = ${u}.duration_seconds + excluded.duration_seconds, cost = ${u}.cost + excluded.cost,
      cost_stt = ${u}.cost_stt + excluded.cost_stt, cost_llm = ${u}.cost_llm + excluded.cost_llm, cost_tts = ${u}.cost_tts + excluded.cost_tts,
      cost_telephony = ${u}.cost_telephony + excluded.cost_telephony, cost_platform = ${u}.cost_platform + excluded.cost_platform,
      analysis_judged = ${u}.analysis_judged + excluded.analysis_judged, analysis_succeeded = ${u}.analysis_succeeded + excluded.analysis_succeeded,
      histogram[${sql.raw(String(bin))}] = coalesce(${u}.histogram[${sql.raw(String(bin))}], 0) + ${sign}::int,
      latency_histogram = (SELECT coalesce(array_agg(coalesce(${u}.latency_histogram[i], 0) + coalesce(excluded.latency_histogram[i], 0) ORDER BY i), '{}')
        FROM generate_series(1, greatest(cardinality(${u}.latency_histogram), cardinality(excluded.latency_histogram))) i)`);
  // A row a late report emptied (its status or end reason changed) counts no call: it goes, so no empty group shows.
  if (sign < 0) {
    const buckets = Object.values(GRAINS_MS).map((step) => floorTo(call.at, step).toISOString());
    await db.execute(sql`DELETE FROM call_usage_rollups WHERE client_id = ${orgId} AND calls = 0 AND bucket = ANY(${`{${buckets.join(',')}}`}::timestamptz[])`);
  }
}

