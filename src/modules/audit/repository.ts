import { and, eq, gte, lt, sql, type SQL } from 'drizzle-orm';
import { type Executor } from '../../db/database.ts';
import { deferOrSend } from '../../db/unit-of-work.ts';
import { orgKeyset } from '../../db/keyset.ts';
import { auditLogs } from '../../db/schema/index.ts';

export type AuditRow = typeof auditLogs.$inferSelect;
/** An entry to write. */
export type NewAuditRow = Required<Omit<typeof auditLogs.$inferInsert, 'clientId' | 'at'>>;

const COLUMNS = ['id', 'actor_type', 'actor_id', 'actor_label', 'action', 'resource_type', 'resource_id', 'changed_fields', 'ip', 'user_agent', 'request_id'] as const;
/** Statements named per row count up to this many rows; larger inserts (rare) go unnamed. */
const NAMED_UP_TO = 8;

const insertTexts = new Map<number, string>();

/**
 * The insert of `count` entries. It is on the path of every change (extensions.md §6 wants the entry
 * in the change's transaction), so it is a prepared statement rather than a query built per call,
 * and its text is built once per row count.
 */
function insertText(count: number): string {
  let text = insertTexts.get(count);
  if (text === undefined) {
    text = buildInsertText(count);
    if (count <= NAMED_UP_TO) insertTexts.set(count, text);
  }
  return text;
}

function buildInsertText(count: number): string {
  const width = COLUMNS.length;
  const tuples = Array.from({ length: count }, (_, r) => {
    const p = (column: (typeof COLUMNS)[number]) => `$${2 + r * width + COLUMNS.indexOf(column)}`;
    return `(${COLUMNS.map((c) => (c === 'changed_fields' ? `${p(c)}::jsonb` : p(c))).join(', ')}, $1)`;
  });
  return `INSERT INTO audit_logs (${COLUMNS.join(', ')}, client_id) VALUES ${tuples.join(', ')}`;
}

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

  /**
   * Writes entries in the executor's transaction: with the change's other pending writes just before
   * its COMMIT (db/unit-of-work.ts), or at once where there is no unit of work (a savepoint, the pool).
   */
  async insert(orgId: string, rows: NewAuditRow[]): Promise<void> {
    if (!rows.length) return;
    const values: unknown[] = [orgId];
    for (const row of rows) {
      values.push(row.id, row.actorType, row.actorId, row.actorLabel, row.action, row.resourceType, row.resourceId,
        JSON.stringify(row.changedFields), row.ip, row.userAgent, row.requestId);
    }
    await deferOrSend(this.#db, { name: rows.length <= NAMED_UP_TO ? `audit_insert_${rows.length}` : undefined, text: insertText(rows.length), values });
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
    // By the rows' physical addresses: no index leads with `at` across organizations, nor with the id.
    const result = await db.execute(sql`
      DELETE FROM audit_logs WHERE ctid = ANY (ARRAY(SELECT ctid FROM audit_logs WHERE at < ${cutoff} LIMIT ${limit}))`);
    return result.rowCount ?? 0;
  }
}
