import type { Executor } from '../../db/database.ts';
import { sql } from 'drizzle-orm';
import { GRAINS_MS } from './usage-periods.ts';
import { durationBin } from './usage-histogram.ts';
import { floorTo } from './rollups.ts';

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
}

export const USAGE_DIMENSIONS = ['none', 'phone_number', 'end_reason', 'campaign', 'agent_version'] as const;
export type UsageDimension = (typeof USAGE_DIMENSIONS)[number];

/**
 * Adds the call to every grain and dimension in one statement, in the caller's transaction (the
 * call's final report): a row is created or its sums grow, and the duration's bin counts one more.
 */
export async function addCallToUsage(db: Executor, orgId: string, call: UsageCall): Promise<void> {
  const values: Record<UsageDimension, string> = { none: '', phone_number: call.phoneNumber ?? '', end_reason: call.endReason ?? '', campaign: call.campaignId ?? '',
    agent_version: call.agentVersion === null ? '' : String(call.agentVersion) };
  const b = call.breakdown ?? { stt: 0, llm: 0, tts: 0, telephony: 0, platform: 0 };
  const bin = durationBin(call.durationSeconds);
  const rows = [];
  for (const [grain, step] of Object.entries(GRAINS_MS)) {
    const bucket = floorTo(call.at, step).toISOString();
    for (const dimension of Object.keys(values) as UsageDimension[]) {
      rows.push(sql`(${orgId}, ${grain}, ${dimension}, ${bucket}::timestamptz, ${call.agentId}, ${call.callType}, ${call.status}, ${values[dimension]}, 1,
        ${call.durationSeconds}::float8, ${call.cost}::numeric, ${b.stt}::numeric, ${b.llm}::numeric, ${b.tts}::numeric, ${b.telephony}::numeric, ${b.platform}::numeric,
        ${`[${bin}:${bin}]={1}`}::int[])`);
    }
  }
  const u = sql.raw('call_usage_rollups');
  await db.execute(sql`INSERT INTO call_usage_rollups (client_id, grain, dimension, bucket, agent_id, call_type, status, value, calls,
      duration_seconds, cost, cost_stt, cost_llm, cost_tts, cost_telephony, cost_platform, histogram)
    VALUES ${sql.join(rows, sql`, `)}
    ON CONFLICT (client_id, grain, dimension, bucket, agent_id, call_type, status, value) DO UPDATE SET
      calls = ${u}.calls + 1, duration_seconds = ${u}.duration_seconds + excluded.duration_seconds, cost = ${u}.cost + excluded.cost,
      cost_stt = ${u}.cost_stt + excluded.cost_stt, cost_llm = ${u}.cost_llm + excluded.cost_llm, cost_tts = ${u}.cost_tts + excluded.cost_tts,
      cost_telephony = ${u}.cost_telephony + excluded.cost_telephony, cost_platform = ${u}.cost_platform + excluded.cost_platform,
      histogram[${sql.raw(String(bin))}] = coalesce(${u}.histogram[${sql.raw(String(bin))}], 0) + 1`);
}

