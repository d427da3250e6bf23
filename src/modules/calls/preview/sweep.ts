import { Type } from 'typebox';
import type { Db } from '../../../db/database.ts';
import { defineJob, jobUnit, type JobUnit } from '../../../jobs/job.ts';
import type { CallService } from '../service.ts';
import { lostPreviewCalls } from './preview-queries.ts';
import { transaction } from '../../../db/unit-of-work.ts';

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
    const since = {
      queuedBefore: new Date(now.getTime() - PREVIEW_UNCONNECTED_SECONDS * 1000),
      silentSince: new Date(now.getTime() - PREVIEW_SILENT_SECONDS * 1000),
    };
    const ended: string[] = [];
    for (const candidate of await lostPreviewCalls(this.#db, since, onlyOrgId)) {
      const done = await transaction(this.#db, async (tx) => {
        // Still lost once locked: a report that came meanwhile keeps the call alive.
        const [row] = await lostPreviewCalls(tx, since, candidate.client_id, candidate.call_sid);
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
