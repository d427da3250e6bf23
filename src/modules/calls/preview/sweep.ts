import { sql } from 'drizzle-orm';
import { Type } from 'typebox';
import type { Db } from '../../../db/database.ts';
import { defineJob, jobUnit, type JobUnit } from '../../../jobs/job.ts';
import type { CallService } from '../service.ts';
import { PREVIEW_TO_NUMBER } from './sessions.ts';

/**
 * Preview calls whose browser or runtime is gone (extensions.md §10: "a preview call whose runtime
 * died is ended `error`"). A carrier call is ended by the carrier's status callback; a preview call
 * has no carrier, so the platform ends it itself: one still `queued` a minute after its session was
 * created (the browser never connected, or the runtime could not load it), or `in_progress` without a
 * report for 40 s (the runtime reports every 15 s while a preview call lives). Either would otherwise
 * hold a place under the concurrency limit forever. Only calls made by preview sessions (their
 * `to_number` is `browser`, which no other path can write) are swept: another runtime's preview
 * calls reported through `POST /api/calls` owe no heartbeat.
 */
export const PREVIEW_UNCONNECTED_SECONDS = 60;
export const PREVIEW_SILENT_SECONDS = 40;

export const PREVIEW_CALLS_SWEEP = defineJob({
  name: 'preview-calls-sweep',
  payload: Type.Object({}),
  options: () => ({ retryLimit: 1, expireInSeconds: 60, retentionSeconds: 3600 }),
  cron: '* * * * *',
});

export class PreviewCallSweeper {
  readonly #db: Db;
  readonly #calls: CallService;
  constructor(deps: { db: Db; calls: CallService }) {
    this.#db = deps.db;
    this.#calls = deps.calls;
  }

  /** Ends the lost preview calls as of `now` (of one organization when given); the sids it ended. */
  async sweep(now = new Date(), onlyOrgId?: string): Promise<string[]> {
    const queuedBefore = new Date(now.getTime() - PREVIEW_UNCONNECTED_SECONDS * 1000);
    const silentSince = new Date(now.getTime() - PREVIEW_SILENT_SECONDS * 1000);
    // Across organizations, as the campaign sweep: the partial index of active calls keeps this small.
    const lost = (tx: Pick<Db, 'execute'>, orgId?: string, callSid?: string) => tx.execute<{ client_id: string; call_sid: string; status: string }>(sql`
      SELECT client_id, call_sid, status FROM calls
      WHERE status IN ('queued', 'in_progress') AND call_type = 'preview' AND to_number = ${PREVIEW_TO_NUMBER}
        AND ((status = 'queued' AND created_at < ${queuedBefore}) OR (status = 'in_progress' AND updated_at < ${silentSince}))
        ${orgId ? sql`AND client_id = ${orgId}` : sql``} ${callSid ? sql`AND call_sid = ${callSid} FOR UPDATE` : sql``}`);
    const ended: string[] = [];
    for (const candidate of (await lost(this.#db, onlyOrgId)).rows) {
      const done = await this.#db.transaction(async (tx) => {
        // Still lost once locked: a report that came meanwhile keeps the call alive.
        const [row] = (await lost(tx, candidate.client_id, candidate.call_sid)).rows;
        if (!row) return false;
        const message = row.status === 'queued'
          ? `No browser connected to the preview call within ${PREVIEW_UNCONNECTED_SECONDS} s`
          : `The voice runtime stopped reporting the preview call (nothing for ${PREVIEW_SILENT_SECONDS} s)`;
        await this.#calls.applyReport(tx, row.client_id, row.call_sid, {
          status: 'failed', end_reason: 'error', error: { provider: 'runtime', code: row.status === 'queued' ? 'not_connected' : 'runtime_lost', message },
        });
        return true;
      });
      if (done) ended.push(candidate.call_sid);
    }
    return ended;
  }
}

export function previewSweepJobs(sweeper: PreviewCallSweeper): JobUnit[] {
  return [jobUnit(PREVIEW_CALLS_SWEEP, async () => { await sweeper.sweep(); })];
}
