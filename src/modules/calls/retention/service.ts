import { Type } from 'typebox';
import type { Db } from '../../../db/database.ts';
import type { ObjectStore } from '../../../adapters/storage/object-store.ts';
import type { Logger } from '../../../core/logger.ts';
import { defineJob, jobUnit, type JobUnit } from '../../../jobs/job.ts';
import type { AuditService } from '../../audit/service.ts';
import type { DataSettingsService } from '../../data-settings/service.ts';
import { CallRetentionRepository } from './repository.ts';
import { transaction } from '../../../db/unit-of-work.ts';

const DAY_MS = 86_400_000;
/** The actor of the sweep's audit entries. */
const SWEEPER = 'data-retention';
const BATCH = 500;

/** Once a day (03:17 UTC), in whichever process's worker takes it first. */
export const DATA_RETENTION = defineJob({
  name: 'data-retention',
  payload: Type.Object({}),
  options: () => ({ retryLimit: 3, retryDelay: 300, expireInSeconds: 3600 }),
  cron: '17 3 * * *',
});

export interface RetentionDeps {
  db: Db;
  store: ObjectStore;
  log: Logger;
  /** Which organizations keep transcripts or recordings for a limited time. */
  dataSettings: Pick<DataSettingsService, 'retentionPolicies'>;
  /** Each deletion is recorded in its transaction, as the platform's (`data-retention`). */
  audit: Pick<AuditService, 'record'>;
  /** The sweep's clock (tests move it). */
  now?: () => Date;
}

export interface SweepResult {
  transcripts: number;
  recordings: number;
}

/**
 * Deletes transcripts and recordings older than their organization's retention (counted from the
 * call's creation). A recording is first marked deleted in the database (its routes answer 404 from
 * then on), then its object is removed, then the key is forgotten: a sweep that dies between the
 * steps leaves a marked row that the next sweep finishes, never a reachable or orphaned file.
 */
export class RetentionSweeper {
  readonly #deps: RetentionDeps;
  constructor(deps: RetentionDeps) {
    this.#deps = deps;
  }

  async sweep(): Promise<SweepResult> {
    const now = this.#deps.now?.() ?? new Date();
    const result: SweepResult = { transcripts: 0, recordings: 0 };
    for (const settings of await this.#deps.dataSettings.retentionPolicies()) {
      const { orgId } = settings;
      if (settings.transcriptRetentionDays !== null) {
        const cutoff = new Date(now.getTime() - settings.transcriptRetentionDays * DAY_MS);
        result.transcripts += await this.#batches(() => transaction(this.#deps.db, async (tx) => {
          const erased = await new CallRetentionRepository(tx).eraseTranscripts(orgId, cutoff, BATCH, now);
          await this.#deps.audit.record(tx, { system: SWEEPER, orgId }, erased.map((sid) => ({ action: 'call.transcript_delete', resourceType: 'call', resourceId: sid, changedFields: ['transcript'] })));
          return erased;
        }));
      }
      const calls = new CallRetentionRepository(this.#deps.db);
      await this.#removeObjects(orgId, await calls.markedRecordings(orgId, BATCH * 10));
      if (settings.recordingRetentionDays !== null) {
        const cutoff = new Date(now.getTime() - settings.recordingRetentionDays * DAY_MS);
        result.recordings += await this.#batches(async () => {
          const marked = await transaction(this.#deps.db, async (tx) => {
            const rows = await new CallRetentionRepository(tx).markRecordingsDeleted(orgId, cutoff, BATCH, now);
            await this.#deps.audit.record(tx, { system: SWEEPER, orgId }, rows.map((r) => ({ action: 'call.recording_delete', resourceType: 'call', resourceId: r.call_sid, changedFields: ['recording'] })));
            return rows;
          });
          await this.#removeObjects(orgId, marked);
          return marked;
        });
      }
    }
    if (result.transcripts || result.recordings) this.#deps.log.info(result, 'data retention: deleted transcripts and recordings past their retention');
    return result;
  }

  async #batches(batch: () => Promise<unknown[]>): Promise<number> {
    let total = 0;
    for (;;) {
      const done = (await batch()).length;
      total += done;
      if (done < BATCH) return total;
    }
  }

  async #removeObjects(orgId: string, recordings: Array<{ call_sid: string; recording_key: string }>): Promise<void> {
    const calls = new CallRetentionRepository(this.#deps.db);
    for (const { call_sid, recording_key } of recordings) {
      await this.#deps.store.delete(recording_key);
      await calls.forgetRecording(orgId, call_sid, recording_key);
    }
  }
}

export function dataRetentionJobs(sweeper: RetentionSweeper): JobUnit[] {
  return [jobUnit(DATA_RETENTION, async () => {
    await sweeper.sweep();
  })];
}
