import { and, eq } from 'drizzle-orm';
import type { Executor } from '../../db/database.ts';
import { newestFirst } from '../../db/keyset.ts';
import { checkoutSessions, creditTransactions, paymentEvents } from '../../db/schema/index.ts';

export type CheckoutSessionRow = typeof checkoutSessions.$inferSelect;
export type TransactionRow = typeof creditTransactions.$inferSelect;

/** Checkout sessions, handled provider events and the ledger's history. */
export class BillingRepository {
  readonly #db: Executor;
  constructor(db: Executor) {
    this.#db = db;
  }

  /** Undefined when the organization already used the idempotency key. */
  async insertSession(orgId: string, row: Omit<typeof checkoutSessions.$inferInsert, 'clientId'>): Promise<CheckoutSessionRow | undefined> {
    const [created] = await this.#db.insert(checkoutSessions).values({ ...row, clientId: orgId }).onConflictDoNothing().returning();
    return created;
  }

  async findByIdempotencyKey(orgId: string, key: string): Promise<CheckoutSessionRow | undefined> {
    const [row] = await this.#db.select().from(checkoutSessions).where(and(eq(checkoutSessions.clientId, orgId), eq(checkoutSessions.idempotencyKey, key)));
    return row;
  }

  /** By our id alone: the hosted page is reached by its link, without credentials. */
  async findSession(id: string, options: { forUpdate?: boolean } = {}): Promise<CheckoutSessionRow | undefined> {
    const query = this.#db.select().from(checkoutSessions).where(eq(checkoutSessions.id, id));
    const [row] = options.forUpdate ? await query.for('update') : await query;
    return row;
  }

  async findByProviderSession(provider: string, providerSessionId: string): Promise<CheckoutSessionRow | undefined> {
    const [row] = await this.#db
      .select()
      .from(checkoutSessions)
      .where(and(eq(checkoutSessions.provider, provider), eq(checkoutSessions.providerSessionId, providerSessionId)))
      .for('update');
    return row;
  }

  async setSessionStatus(id: string, status: string, completedAt?: Date): Promise<void> {
    await this.#db.update(checkoutSessions).set({ status, ...(completedAt ? { completedAt } : {}) }).where(eq(checkoutSessions.id, id));
  }

  /** False when the event was handled before. */
  async recordEvent(row: typeof paymentEvents.$inferInsert): Promise<boolean> {
    const inserted = await this.#db.insert(paymentEvents).values(row).onConflictDoNothing().returning({ id: paymentEvents.id });
    return inserted.length > 0;
  }

  async listTransactions(orgId: string, limit: number, before?: { at: Date; id: string }): Promise<TransactionRow[]> {
    const page = newestFirst(creditTransactions, orgId, before);
    return this.#db.select().from(creditTransactions).where(page.where).orderBy(...page.orderBy).limit(limit);
  }
}
