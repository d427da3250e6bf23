import { and, eq, inArray, sql } from 'drizzle-orm';
import type { Executor } from '../../db/database.ts';
import { events, webhookDeliveries, webhookEndpoints } from '../../db/schema/index.ts';
import { newestFirst } from '../../db/keyset.ts';
import { TenantRepository } from '../../db/tenant-repository.ts';

export type EventRow = typeof events.$inferSelect;
export type EndpointRow = typeof webhookEndpoints.$inferSelect;
export type NewEndpointRow = Omit<typeof webhookEndpoints.$inferInsert, 'clientId'>;
export type DeliveryRow = typeof webhookDeliveries.$inferSelect;
export type { DeliveryAttempt } from '../../db/schema/index.ts';

type Before = { at: Date; id: string } | undefined;

/** Events of one organization: every method takes the organization id first. */
export class EventRepository {
  readonly #db: Executor;
  constructor(db: Executor) {
    this.#db = db;
  }

  async list(orgId: string, limit: number, types: string[] | undefined, before: Before): Promise<EventRow[]> {
    const page = newestFirst(events, orgId, before);
    const filter = types?.length ? inArray(events.type, types) : undefined;
    return this.#db.select().from(events).where(and(page.where, filter)).orderBy(...page.orderBy).limit(limit);
  }

  async findById(orgId: string, eventId: string): Promise<EventRow | undefined> {
    const [row] = await this.#db.select().from(events).where(and(eq(events.clientId, orgId), eq(events.id, eventId)));
    return row;
  }

  /** Deletes events older than `cutoff` (every organization's: the retention job), a batch at a time. */
  static async deleteOlderThan(db: Executor, cutoff: Date, batch = 5000): Promise<number> {
    let total = 0;
    for (;;) {
      const { rowCount } = await db.execute(sql`
        DELETE FROM events WHERE id IN (SELECT id FROM events WHERE created_at < ${cutoff.toISOString()}::timestamptz LIMIT ${batch})`);
      total += rowCount ?? 0;
      if ((rowCount ?? 0) < batch) return total;
    }
  }
}

/** Webhook endpoints of one organization (by id, list, update: TenantRepository). */
export class WebhookRepository extends TenantRepository<typeof webhookEndpoints> {
  constructor(db: Executor) {
    super(db, webhookEndpoints);
  }

  async insert(orgId: string, row: NewEndpointRow): Promise<EndpointRow> {
    const [created] = await this.db.insert(webhookEndpoints).values({ ...row, clientId: orgId }).returning();
    return created!;
  }

  async delete(orgId: string, id: string): Promise<EndpointRow | undefined> {
    const [row] = await this.db.delete(webhookEndpoints).where(this.one(orgId, id)).returning();
    return row;
  }
}

/** Deliveries of one organization's endpoints. */
export class DeliveryRepository {
  readonly #db: Executor;
  constructor(db: Executor) {
    this.#db = db;
  }

  async findById(orgId: string, id: string, options: { forUpdate?: boolean } = {}): Promise<DeliveryRow | undefined> {
    const query = this.#db.select().from(webhookDeliveries).where(and(eq(webhookDeliveries.clientId, orgId), eq(webhookDeliveries.id, id)));
    const [row] = options.forUpdate ? await query.for('update') : await query;
    return row;
  }

  async list(orgId: string, endpointId: string, limit: number, filters: { status?: string; eventType?: string }, before: Before): Promise<DeliveryRow[]> {
    const page = newestFirst(webhookDeliveries, orgId, before);
    return this.#db.select().from(webhookDeliveries).where(and(
      page.where, eq(webhookDeliveries.endpointId, endpointId),
      filters.status ? eq(webhookDeliveries.status, filters.status) : undefined,
      filters.eventType ? eq(webhookDeliveries.eventType, filters.eventType) : undefined,
    )).orderBy(...page.orderBy).limit(limit);
  }

  async update(orgId: string, id: string, changes: Partial<typeof webhookDeliveries.$inferInsert>): Promise<DeliveryRow> {
    const [row] = await this.#db.update(webhookDeliveries).set({ ...changes, updatedAt: new Date() })
      .where(and(eq(webhookDeliveries.clientId, orgId), eq(webhookDeliveries.id, id))).returning();
    return row!;
  }
}


/** Unsettled, its time come, and not claimed (or its claim lapsed): read from the partial index `webhook_deliveries_due_idx`. */
function dueAt(now: Date) {
  const at = now.toISOString();
  return sql`status IN ('pending', 'retrying') AND next_attempt_at <= ${at}::timestamptz AND (locked_until IS NULL OR locked_until <= ${at}::timestamptz)`;
}

export interface ClaimedDelivery {
  clientId: string;
  id: string;
  attemptCount: number;
}

/**
 * The dispatchers' side of the deliveries, across organizations: claims due deliveries for a while.
 * SKIP LOCKED lets several worker processes claim side by side without waiting on each other or
 * taking the same delivery; the claim lasts until `lockedUntil`, after which a delivery whose worker
 * died is due again.
 */
export async function claimDueDeliveries(db: Executor, now: Date, limit: number, lockedUntil: Date): Promise<ClaimedDelivery[]> {
  const { rows } = await db.execute<{ client_id: string; id: string; attempt_count: number }>(sql`
    UPDATE webhook_deliveries d SET locked_until = ${lockedUntil.toISOString()}::timestamptz
      FROM (SELECT id FROM webhook_deliveries WHERE ${dueAt(now)}
             ORDER BY next_attempt_at LIMIT ${limit} FOR UPDATE SKIP LOCKED) due
     WHERE d.id = due.id
    RETURNING d.client_id, d.id, d.attempt_count`);
  return rows.map((r) => ({ clientId: r.client_id, id: r.id, attemptCount: Number(r.attempt_count) }));
}

/** Deliveries due now and not claimed: the backlog the metrics report. */
export async function countDueDeliveries(db: Executor, now: Date): Promise<number> {
  const { rows } = await db.execute<{ n: number }>(sql`
    SELECT count(*)::int AS n FROM webhook_deliveries WHERE ${dueAt(now)}`);
  return Number(rows[0]?.n ?? 0);
}
