import { and, eq, inArray, sql } from 'drizzle-orm';
import type { Executor } from '../../db/database.ts';
import { callRollups } from '../../db/schema/index.ts';

export const ALL_AGENTS = '*';
export const MINUTE_MS = 60_000;
export const QUARTER_MS = 15 * MINUTE_MS;
export const HOUR_MS = 60 * MINUTE_MS;

/** Rollup grains, finest first. */
export const GRAINS = { minute: MINUTE_MS, quarter: QUARTER_MS, hour: HOUR_MS } as const;

export function floorTo(at: Date, stepMs: number): Date {
  return new Date(Math.floor(at.getTime() / stepMs) * stepMs);
}

/**
 * Adds a finished call to the rollups (its agent's and the organization's, per minute and per
 * quarter hour), in the caller's transaction: the call's final update and its place in the
 * analytics commit together.
 */
export interface EndedCall {
  agentId: string;
  /** When it started (its creation when it never connected): the bucket it counts in. */
  at: Date;
  cost: number;
  durationSeconds: number;
}

/** With `sign` -1 it takes back what adding the same call put there (a late report replaces it). */
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
