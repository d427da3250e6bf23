import { eq, isNotNull, or } from 'drizzle-orm';
import type { Executor } from '../../db/database.ts';
import { dataSettings } from '../../db/schema/index.ts';

export type DataSettingsRow = typeof dataSettings.$inferSelect;
/** A transcript's turn as stored: what redaction reads and writes. */
export type { TranscriptTurn } from '../../db/schema/index.ts';
export type DataSettingsChanges = Partial<Pick<DataSettingsRow, 'transcriptRetentionDays' | 'recordingRetentionDays' | 'redactPii'>>;

/** The data policy of one organization: every method takes the organization id first. */
export class DataSettingsRepository {
  readonly #db: Executor;
  constructor(db: Executor) {
    this.#db = db;
  }

  async find(orgId: string): Promise<DataSettingsRow | undefined> {
    const [row] = await this.#db.select().from(dataSettings).where(eq(dataSettings.clientId, orgId));
    return row;
  }

  async upsert(orgId: string, changes: DataSettingsChanges): Promise<DataSettingsRow> {
    const [row] = await this.#db
      .insert(dataSettings)
      .values({ clientId: orgId, ...changes })
      .onConflictDoUpdate({ target: dataSettings.clientId, set: { ...changes, updatedAt: new Date() } })
      .returning();
    return row!;
  }

  /**
   * Every organization with a retention period, for the daily sweep: the one query here not bound
   * to an organization, because the sweep is the platform's, not a tenant's.
   */
  static async withRetention(db: Executor): Promise<DataSettingsRow[]> {
    return db.select().from(dataSettings).where(or(isNotNull(dataSettings.transcriptRetentionDays), isNotNull(dataSettings.recordingRetentionDays)));
  }
}
