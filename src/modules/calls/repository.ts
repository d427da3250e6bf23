import { and, eq } from 'drizzle-orm';
import type { Executor } from '../../db/database.ts';
import { CALL_COLUMNS, calls, type CallRecord } from '../../db/schema/index.ts';

export type CallRow = CallRecord;
export type { CallAnalysis, CostBreakdown, TranscriptTurn } from '../../db/schema/index.ts';
export type NewCallRow = Omit<typeof calls.$inferInsert, 'clientId' | 'transcriptSearch'>;


/** Calls of one organization: every method takes the organization id first. */
export class CallRepository {
  readonly #db: Executor;
  constructor(db: Executor) {
    this.#db = db;
  }

  /** Undefined when this organization already has a call with that sid (sids are unique per organization). */
  async insert(orgId: string, row: NewCallRow): Promise<CallRow | undefined> {
    const [created] = await this.#db.insert(calls).values({ ...row, clientId: orgId }).onConflictDoNothing().returning(CALL_COLUMNS);
    return created;
  }

  async findBySid(orgId: string, callSid: string, options: { forUpdate?: boolean } = {}): Promise<CallRow | undefined> {
    const query = this.#db.select(CALL_COLUMNS).from(calls).where(and(eq(calls.clientId, orgId), eq(calls.callSid, callSid)));
    const [row] = options.forUpdate ? await query.for('update') : await query;
    return row;
  }

  async update(orgId: string, callSid: string, changes: Partial<NewCallRow>): Promise<CallRow> {
    const [row] = await this.#db
      .update(calls)
      .set({ ...changes, updatedAt: new Date() })
      .where(and(eq(calls.clientId, orgId), eq(calls.callSid, callSid)))
      .returning(CALL_COLUMNS);
    return row!;
  }
}
