import type { Static } from 'typebox';
import type { Db, Executor } from '../../db/database.ts';
import type { RequestContext } from '../../core/context.ts';
import { iso } from '../../core/schemas.ts';
import { DataSettingsRepository, type DataSettingsChanges, type DataSettingsRow, type TranscriptTurn } from './repository.ts';
import { redactPii } from './pii-redaction.ts';
import type { DataSettings, UpdateDataSettingsBody } from './schemas.ts';
import type { AuditService } from '../audit/service.ts';
import { transaction } from '../../db/unit-of-work.ts';

type DataSettingsView = Static<typeof DataSettings>;

function toView(row: DataSettingsRow | undefined): DataSettingsView {
  return {
    transcript_retention_days: row?.transcriptRetentionDays ?? null,
    recording_retention_days: row?.recordingRetentionDays ?? null,
    redact_pii: row?.redactPii ?? false,
    updated_at: row ? iso(row.updatedAt) : null,
  };
}

/** An organization's data policy: how long transcripts and recordings are kept, and whether personal data is stored. */
export class DataSettingsService {
  readonly #db: Db;
  readonly #audit: Pick<AuditService, 'record'>;
  constructor(deps: { db: Db; audit: Pick<AuditService, 'record'> }) {
    this.#db = deps.db;
    this.#audit = deps.audit;
  }

  async get(ctx: RequestContext): Promise<DataSettingsView> {
    return toView(await new DataSettingsRepository(this.#db).find(ctx.orgId));
  }

  async update(ctx: RequestContext, input: Static<typeof UpdateDataSettingsBody>): Promise<DataSettingsView> {
    const changes: DataSettingsChanges = {};
    if (input.transcript_retention_days !== undefined) changes.transcriptRetentionDays = input.transcript_retention_days;
    if (input.recording_retention_days !== undefined) changes.recordingRetentionDays = input.recording_retention_days;
    if (input.redact_pii !== undefined) changes.redactPii = input.redact_pii;
    const row = await transaction(this.#db, async (tx) => {
      const updated = await new DataSettingsRepository(tx).upsert(ctx.orgId, changes);
      await this.#audit.record(tx, ctx, { action: 'data_settings.update', resourceType: 'data_settings', resourceId: ctx.orgId, changedFields: Object.keys(input) });
      return updated;
    });
    return toView(row);
  }

  /**
   * The transcript as the organization's policy lets it be stored: redacted when `redact_pii` is
   * on. Read in the caller's transaction, with the report it belongs to.
   */
  async transcriptToStore(executor: Executor, orgId: string, transcript: TranscriptTurn[]): Promise<TranscriptTurn[]> {
    const settings = await new DataSettingsRepository(executor).find(orgId);
    if (!settings?.redactPii) return transcript;
    return transcript.map((turn) => ({ ...turn, text: redactPii(turn.text) }));
  }

  /** Every organization with a retention period, for the platform's daily sweep. */
  async retentionPolicies(): Promise<Array<{ orgId: string; transcriptRetentionDays: number | null; recordingRetentionDays: number | null }>> {
    const rows = await DataSettingsRepository.withRetention(this.#db);
    return rows.map((r) => ({ orgId: r.clientId, transcriptRetentionDays: r.transcriptRetentionDays, recordingRetentionDays: r.recordingRetentionDays }));
  }
}
