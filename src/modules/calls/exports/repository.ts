import { and, eq, inArray, lt, sql } from 'drizzle-orm';
import type { Executor } from '../../../db/database.ts';
import { callExports } from '../../../db/schema/index.ts';

export type CallExportRow = typeof callExports.$inferSelect;
export type NewCallExportRow = Omit<typeof callExports.$inferInsert, 'clientId'>;

/** Exports of one organization; the job's status moves are guarded by the status they leave. */
export class CallExportRepository {
  readonly #db: Executor;
  constructor(db: Executor) {
    this.#db = db;
  }

  async insert(orgId: string, row: NewCallExportRow): Promise<CallExportRow> {
    const [created] = await this.#db.insert(callExports).values({ ...row, clientId: orgId }).returning();
    return created!;
  }

  async find(orgId: string, id: string): Promise<CallExportRow | undefined> {
    const [row] = await this.#db.select().from(callExports).where(and(eq(callExports.clientId, orgId), eq(callExports.id, id)));
    return row;
  }

  /** Takes a pending export, or one whose worker died while running it; undefined when it is already done. */
  async claim(orgId: string, id: string): Promise<CallExportRow | undefined> {
    const [row] = await this.#db.update(callExports).set({ status: 'running', startedAt: sql`now()` })
      .where(and(eq(callExports.clientId, orgId), eq(callExports.id, id), inArray(callExports.status, ['pending', 'running'])))
      .returning();
    return row;
  }

  async complete(orgId: string, id: string, result: { rowCount: number; bytes: number; objectKey: string }): Promise<boolean> {
    const rows = await this.#db.update(callExports).set({ ...result, status: 'completed', error: null, completedAt: sql`now()` })
      .where(and(eq(callExports.clientId, orgId), eq(callExports.id, id), eq(callExports.status, 'running')))
      .returning({ id: callExports.id });
    return rows.length > 0;
  }

  async fail(orgId: string, id: string, error: string): Promise<void> {
    await this.#db.update(callExports).set({ status: 'failed', error, completedAt: sql`now()` })
      .where(and(eq(callExports.clientId, orgId), eq(callExports.id, id), eq(callExports.status, 'running')));
  }

  /** Exports of every organization past their 7 days (the cleanup job: not one organization's query). */
  async expired(now: Date, limit: number): Promise<Array<Pick<CallExportRow, 'id' | 'clientId' | 'objectKey'>>> {
    return this.#db.select({ id: callExports.id, clientId: callExports.clientId, objectKey: callExports.objectKey })
      .from(callExports).where(lt(callExports.expiresAt, now)).limit(limit);
  }

  async delete(orgId: string, id: string): Promise<void> {
    await this.#db.delete(callExports).where(and(eq(callExports.clientId, orgId), eq(callExports.id, id)));
  }
}
