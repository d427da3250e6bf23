import { and, eq, gte, lt, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../db/database.ts';
import { orgKeyset } from '../../db/keyset.ts';
import { auditLogs } from '../../db/schema/index.ts';

export type AuditRow = typeof auditLogs.$inferSelect;
export type NewAuditRow = Omit<typeof auditLogs.$inferInsert, 'clientId' | 'actorLabel'> & { actorLabel?: string | null | SQL };

export interface AuditFilters {
  actorId?: string;
  action?: string;
  resourceType?: string;
  resourceId?: string;
  from?: Date;
  to?: Date;
}

/** The audit log of one organization: every method takes the organization id first. */
export class AuditRepository {
  readonly #db: Executor;
  constructor(db: Executor) {
    this.#db = db;
  }

  async insert(orgId: string, rows: NewAuditRow[]): Promise<void> {
    if (rows.length) await this.#db.insert(auditLogs).values(rows.map((row) => ({ ...row, clientId: orgId })));
  }

  async list(orgId: string, filters: AuditFilters, limit: number, before?: { at: Date; id: string }): Promise<AuditRow[]> {
    const filter = and(
      filters.actorId ? eq(auditLogs.actorId, filters.actorId) : undefined,
      filters.action ? eq(auditLogs.action, filters.action) : undefined,
      filters.resourceType ? eq(auditLogs.resourceType, filters.resourceType) : undefined,
      filters.resourceId ? eq(auditLogs.resourceId, filters.resourceId) : undefined,
      filters.from ? gte(auditLogs.at, filters.from) : undefined,
      filters.to ? lt(auditLogs.at, filters.to) : undefined,
    );
    const page = orgKeyset({ clientId: auditLogs.clientId, sort: auditLogs.at, id: auditLogs.id }, orgId, {
      direction: 'desc', filter, after: before && { value: before.at, id: before.id },
    });
    return this.#db.select().from(auditLogs).where(page.where).orderBy(...page.orderBy).limit(limit);
  }

  /** Entries older than `cutoff`, of every organization: the platform's retention, not a tenant's query. */
  static async deleteOlderThan(db: Executor, cutoff: Date, limit: number): Promise<number> {
    const result = await db.execute(sql`
      DELETE FROM audit_logs WHERE id IN (SELECT id FROM audit_logs WHERE at < ${cutoff} LIMIT ${limit})`);
    return result.rowCount ?? 0;
  }
}
