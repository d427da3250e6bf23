import { and, count, desc, eq, inArray } from 'drizzle-orm';
import type { Executor } from '../../db/database.ts';
import { newestFirst } from '../../db/keyset.ts';
import { belongsToAnotherOrganization } from '../../db/ownership.ts';
import { integrations, phoneNumbers } from '../../db/schema/index.ts';

export type IntegrationRow = typeof integrations.$inferSelect;
export type NewIntegrationRow = Omit<typeof integrations.$inferInsert, 'clientId'>;

/** Integrations of one organization: every method takes the organization id first. */
export class IntegrationRepository {
  readonly #db: Executor;
  constructor(db: Executor) {
    this.#db = db;
  }

  async insert(orgId: string, row: NewIntegrationRow): Promise<IntegrationRow> {
    const [created] = await this.#db.insert(integrations).values({ ...row, clientId: orgId }).returning();
    return created!;
  }

  async findById(orgId: string, id: string): Promise<IntegrationRow | undefined> {
    const [row] = await this.#db.select().from(integrations).where(and(eq(integrations.clientId, orgId), eq(integrations.id, id)));
    return row;
  }

  /** 403 rather than 404 when a phone import names it, as the specification says. */
  existsElsewhere(orgId: string, id: string): Promise<boolean> {
    return belongsToAnotherOrganization(this.#db, integrations, orgId, id);
  }

  async list(orgId: string, limit: number, before?: { at: Date; id: string }): Promise<IntegrationRow[]> {
    const page = newestFirst(integrations, orgId, before);
    return this.#db.select().from(integrations).where(page.where).orderBy(...page.orderBy).limit(limit);
  }

  /** The newest `active` integration of the provider among the categories, for an agent that names none. */
  async newestActive(orgId: string, provider: string, categories: readonly string[]): Promise<IntegrationRow | undefined> {
    const [row] = await this.#db.select().from(integrations)
      .where(and(eq(integrations.clientId, orgId), eq(integrations.provider, provider), eq(integrations.status, 'active'), inArray(integrations.category, [...categories])))
      .orderBy(desc(integrations.createdAt), desc(integrations.id))
      .limit(1);
    return row;
  }

  async count(orgId: string): Promise<number> {
    const [row] = await this.#db.select({ n: count() }).from(integrations).where(eq(integrations.clientId, orgId));
    return row?.n ?? 0;
  }

  async update(orgId: string, id: string, changes: Partial<NewIntegrationRow>): Promise<IntegrationRow | undefined> {
    const [row] = await this.#db
      .update(integrations)
      .set({ ...changes, updatedAt: new Date() })
      .where(and(eq(integrations.clientId, orgId), eq(integrations.id, id)))
      .returning();
    return row;
  }

  async delete(orgId: string, id: string): Promise<void> {
    await this.#db.delete(integrations).where(and(eq(integrations.clientId, orgId), eq(integrations.id, id)));
  }

  async phoneNumberCount(orgId: string, id: string): Promise<number> {
    const [row] = await this.#db
      .select({ n: count() })
      .from(phoneNumbers)
      .where(and(eq(phoneNumbers.clientId, orgId), eq(phoneNumbers.integrationId, id)));
    return row?.n ?? 0;
  }
}
