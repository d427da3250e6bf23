import { and, count, desc, eq, inArray } from 'drizzle-orm';
import type { Executor } from '../../db/database.ts';
import { belongsToAnotherOrganization } from '../../db/ownership.ts';
import { integrations, phoneNumbers } from '../../db/schema/index.ts';
import { TenantRepository } from '../../db/tenant-repository.ts';

export type IntegrationRow = typeof integrations.$inferSelect;
export type NewIntegrationRow = Omit<typeof integrations.$inferInsert, 'clientId'>;

/** Integrations of one organization: every method takes the organization id first (by id, list, count, update: TenantRepository). */
export class IntegrationRepository extends TenantRepository<typeof integrations> {
  constructor(db: Executor) {
    super(db, integrations);
  }

  async insert(orgId: string, row: NewIntegrationRow): Promise<IntegrationRow> {
    const [created] = await this.db.insert(integrations).values({ ...row, clientId: orgId }).returning();
    return created!;
  }

  async delete(orgId: string, id: string): Promise<void> {
    await this.db.delete(integrations).where(this.one(orgId, id));
  }

  /** 403 rather than 404 when a phone import names it, as the specification says. */
  existsElsewhere(orgId: string, id: string): Promise<boolean> {
    return belongsToAnotherOrganization(this.db, integrations, orgId, id);
  }

  /** The newest `active` integration of the provider among the categories, for an agent that names none. */
  async newestActive(orgId: string, provider: string, categories: readonly string[]): Promise<IntegrationRow | undefined> {
    const [row] = await this.db.select().from(integrations)
      .where(and(eq(integrations.clientId, orgId), eq(integrations.provider, provider), eq(integrations.status, 'active'), inArray(integrations.category, [...categories])))
      .orderBy(desc(integrations.createdAt), desc(integrations.id))
      .limit(1);
    return row;
  }

  async phoneNumberCount(orgId: string, id: string): Promise<number> {
    const [row] = await this.db
      .select({ n: count() })
      .from(phoneNumbers)
      .where(and(eq(phoneNumbers.clientId, orgId), eq(phoneNumbers.integrationId, id)));
    return row?.n ?? 0;
  }
}
