import { and, eq } from 'drizzle-orm';
import type { Executor } from '../../db/database.ts';
import { calls } from '../../db/schema/index.ts';

export type CallRow = typeof calls.$inferSelect;
export type NewCallRow = Omit<typeof calls.$inferInsert, 'clientId'>;

export interface CallFilters {
  agentId?: string;
  status?: string;
  callType?: string;
  /** Created at or after. */
  from?: Date;
  /** Created before. */
  to?: Date;
}

/** Calls of one organization: every method takes the organization id first. */
export class CallRepository {
  readonly #db: Executor;
  constructor(db: Executor) {
    this.#db = db;
  }

  /** Undefined when this organization already has a call with that sid (sids are unique per organization). */
  async insert(orgId: string, row: NewCallRow): Promise<CallRow | undefined> {
    const [created] = await this.#db.insert(calls).values({ ...row, clientId: orgId }).onConflictDoNothing().returning();
    return created;
  }

  async findBySid(orgId: string, callSid: string, options: { forUpdate?: boolean } = {}): Promise<CallRow | undefined> {
    const query = this.#db.select().from(calls).where(and(eq(calls.clientId, orgId), eq(calls.callSid, callSid)));
    const [row] = options.forUpdate ? await query.for('update') : await query;
    return row;
  }

  async update(orgId: string, callSid: string, changes: Partial<NewCallRow>): Promise<CallRow> {
    const [row] = await this.#db
      .update(calls)
      .set({ ...changes, updatedAt: new Date() })
      .where(and(eq(calls.clientId, orgId), eq(calls.callSid, callSid)))
      .returning();
    return row!;
  }
}
