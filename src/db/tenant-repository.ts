import { and, count, eq, type SQL } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import type { Executor } from './database.ts';
import { newestFirst } from './keyset.ts';

/** A table of organizations' records: `client_id`, a text `id`, `created_at` and `updated_at`. */
export type TenantTable = PgTable & { clientId: PgColumn; id: PgColumn; createdAt: PgColumn; updatedAt: PgColumn };

/**
 * The reads and the update every plain resource repeats, each bound to one organization (its id
 * first): by id (locked when asked), a page newest first, the count, an update that stamps
 * `updated_at`. A repository extends it with its table and adds its own queries on `db`, its insert
 * and delete among them: that is where resources differ (a unique name, a number deleted only while
 * unassigned). The casts stay in here: Drizzle cannot follow a table given as a type parameter, so
 * rows are typed from the table.
 */
export class TenantRepository<T extends TenantTable> {
  protected readonly db: Executor;
  protected readonly table: T;
  constructor(db: Executor, table: T) {
    this.db = db;
    this.table = table;
  }

  /** The organization's record `id`. */
  protected one(orgId: string, id: string): SQL {
    return and(eq(this.table.clientId, orgId), eq(this.table.id, id))!;
  }

  async findById(orgId: string, id: string, options: { forUpdate?: boolean } = {}): Promise<T['$inferSelect'] | undefined> {
    const query = this.db.select().from(this.table as PgTable).where(this.one(orgId, id));
    const [row] = options.forUpdate ? await query.for('update') : await query;
    return row as T['$inferSelect'] | undefined;
  }

  /** Newest first; `before` is the keyset position of the last row of the previous page. */
  async list(orgId: string, limit: number, before?: { at: Date; id: string }): Promise<Array<T['$inferSelect']>> {
    const page = newestFirst(this.table, orgId, before);
    return this.db.select().from(this.table as PgTable).where(page.where).orderBy(...page.orderBy).limit(limit) as Promise<Array<T['$inferSelect']>>;
  }

  async count(orgId: string): Promise<number> {
    const [row] = await this.db.select({ n: count() }).from(this.table as PgTable).where(eq(this.table.clientId, orgId));
    return row?.n ?? 0;
  }

  /** Undefined when the organization has no such record. */
  async update(orgId: string, id: string, changes: Partial<Omit<T['$inferInsert'], 'clientId'>>): Promise<T['$inferSelect'] | undefined> {
    const rows = await this.db.update(this.table).set({ ...changes, updatedAt: new Date() } as never).where(this.one(orgId, id)).returning();
    return (rows as Array<T['$inferSelect']>)[0];
  }
}
