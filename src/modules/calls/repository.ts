import { and, eq, gte, lt, type SQL } from 'drizzle-orm';
import type { Executor } from '../../db/database.ts';
import { newestFirst } from '../../db/keyset.ts';
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

/** The columns of a call summary: the list never reads transcripts. */
const SUMMARY = {
  callSid: calls.callSid, clientId: calls.clientId, agentId: calls.agentId, agentName: calls.agentName,
  callType: calls.callType, status: calls.status, fromNumber: calls.fromNumber, toNumber: calls.toNumber,
  recordingEnabled: calls.recordingEnabled, startTime: calls.startTime, endTime: calls.endTime,
  endReason: calls.endReason, durationSeconds: calls.durationSeconds, turnCount: calls.turnCount,
  totalCost: calls.totalCost, billingStatus: calls.billingStatus, createdAt: calls.createdAt, updatedAt: calls.updatedAt,
};
export type CallSummaryRow = Pick<CallRow, keyof typeof SUMMARY>;

/** Calls of one organization: every method takes the organization id first. */
export class CallRepository {
  readonly #db: Executor;
  constructor(db: Executor) {
    this.#db = db;
  }

  /** Undefined when the call sid is taken (by any organization: sids are global). */
  async insert(orgId: string, row: NewCallRow): Promise<CallRow | undefined> {
    const [created] = await this.#db.insert(calls).values({ ...row, clientId: orgId }).onConflictDoNothing().returning();
    return created;
  }

  async findBySid(orgId: string, callSid: string, options: { forUpdate?: boolean } = {}): Promise<CallRow | undefined> {
    const query = this.#db.select().from(calls).where(and(eq(calls.clientId, orgId), eq(calls.callSid, callSid)));
    const [row] = options.forUpdate ? await query.for('update') : await query;
    return row;
  }

  async list(orgId: string, filters: CallFilters, limit: number, before?: { at: Date; id: string }): Promise<CallSummaryRow[]> {
    const page = newestFirst(calls.createdAt, calls.callSid, before);
    const conditions: Array<SQL | undefined> = [eq(calls.clientId, orgId), page.after];
    if (filters.agentId) conditions.push(eq(calls.agentId, filters.agentId));
    if (filters.status) conditions.push(eq(calls.status, filters.status));
    if (filters.callType) conditions.push(eq(calls.callType, filters.callType));
    if (filters.from) conditions.push(gte(calls.createdAt, filters.from));
    if (filters.to) conditions.push(lt(calls.createdAt, filters.to));
    return this.#db.select(SUMMARY).from(calls).where(and(...conditions)).orderBy(...page.orderBy).limit(limit);
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
