import { and, count, eq, inArray } from 'drizzle-orm';
import type { Executor } from '../../db/database.ts';
import { calls, organizations } from '../../db/schema/index.ts';
import { ACTIVE_STATUSES } from '../../core/call-enums.ts';


/** An organization's limits and the calls they count: every method takes the organization id first. */
export class LimitsRepository {
  readonly #db: Executor;
  constructor(db: Executor) {
    this.#db = db;
  }

  /**
   * The organization's limit, its row locked until the transaction ends, so the creations of calls
   * of one organization take turns between counting and inserting. FOR NO KEY UPDATE leaves the
   * foreign-key checks of other inserts (FOR KEY SHARE) unblocked.
   */
  async lockMaxConcurrentCalls(orgId: string): Promise<number | undefined> {
    const [row] = await this.#db.select({ max: organizations.maxConcurrentCalls }).from(organizations)
      .where(eq(organizations.id, orgId)).for('no key update');
    return row?.max;
  }

  async maxConcurrentCalls(orgId: string): Promise<number | undefined> {
    const [row] = await this.#db.select({ max: organizations.maxConcurrentCalls }).from(organizations).where(eq(organizations.id, orgId));
    return row?.max;
  }

  /** Calls not yet final (served by the partial index calls_active_idx). */
  async countActiveCalls(orgId: string): Promise<number> {
    const [row] = await this.#db.select({ n: count() }).from(calls).where(and(eq(calls.clientId, orgId), inArray(calls.status, [...ACTIVE_STATUSES])));
    return Number(row?.n ?? 0);
  }

  /** False when there is no such organization. */
  async setMaxConcurrentCalls(orgId: string, max: number): Promise<boolean> {
    const rows = await this.#db.update(organizations).set({ maxConcurrentCalls: max, updatedAt: new Date() })
      .where(eq(organizations.id, orgId)).returning({ id: organizations.id });
    return rows.length > 0;
  }
}
