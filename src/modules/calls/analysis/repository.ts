import { and, count, eq, sql } from 'drizzle-orm';
import type { Executor } from '../../../db/database.ts';
import { callAnalysisBatches, callAnalysisRuns } from '../../../db/schema/index.ts';

export type AnalysisRunRow = typeof callAnalysisRuns.$inferSelect;
export type AnalysisBatchRow = typeof callAnalysisBatches.$inferSelect;

/** Post-call analysis runs and bulk reruns of one organization: every method takes the organization id first. */
export class CallAnalysisRepository {
  readonly #db: Executor;
  constructor(db: Executor) {
    this.#db = db;
  }

  /** Undefined when the run exists already (a call's end analysis per version, a batch's run per call). */
  async insertRun(orgId: string, run: Omit<typeof callAnalysisRuns.$inferInsert, 'clientId'>): Promise<AnalysisRunRow | undefined> {
    const [row] = await this.#db.insert(callAnalysisRuns).values({ ...run, clientId: orgId }).onConflictDoNothing().returning();
    return row;
  }

  async findRun(orgId: string, id: string, options: { forUpdate?: boolean } = {}): Promise<AnalysisRunRow | undefined> {
    const query = this.#db.select().from(callAnalysisRuns).where(and(eq(callAnalysisRuns.clientId, orgId), eq(callAnalysisRuns.id, id)));
    const [row] = options.forUpdate ? await query.for('update') : await query;
    return row;
  }

  async finishRun(orgId: string, id: string, status: 'completed' | 'failed'): Promise<void> {
    await this.#db.update(callAnalysisRuns).set({ status, completedAt: new Date() }).where(and(eq(callAnalysisRuns.clientId, orgId), eq(callAnalysisRuns.id, id)));
  }

  async insertBatch(orgId: string, batch: Omit<typeof callAnalysisBatches.$inferInsert, 'clientId'>): Promise<AnalysisBatchRow> {
    const [row] = await this.#db.insert(callAnalysisBatches).values({ ...batch, clientId: orgId }).returning();
    return row!;
  }

  async findBatch(orgId: string, id: string): Promise<AnalysisBatchRow | undefined> {
    const [row] = await this.#db.select().from(callAnalysisBatches).where(and(eq(callAnalysisBatches.clientId, orgId), eq(callAnalysisBatches.id, id)));
    return row;
  }

  async setBatch(orgId: string, id: string, changes: { status: string; total: number }): Promise<void> {
    await this.#db.update(callAnalysisBatches).set(changes).where(and(eq(callAnalysisBatches.clientId, orgId), eq(callAnalysisBatches.id, id)));
  }

  /** A batch's runs by status. */
  async batchCounts(orgId: string, batchId: string): Promise<Record<string, number>> {
    const rows = await this.#db.select({ status: callAnalysisRuns.status, n: count() }).from(callAnalysisRuns)
      .where(and(eq(callAnalysisRuns.clientId, orgId), eq(callAnalysisRuns.batchId, batchId), sql`${callAnalysisRuns.batchId} IS NOT NULL`))
      .groupBy(callAnalysisRuns.status);
    return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
  }
}
