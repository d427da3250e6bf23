import { and, eq, isNull } from 'drizzle-orm';
import type { Executor } from '../../db/database.ts';
import { belongsToAnotherOrganization } from '../../db/ownership.ts';
import { phoneNumbers } from '../../db/schema/index.ts';
import { TenantRepository } from '../../db/tenant-repository.ts';

export type PhoneNumberRow = typeof phoneNumbers.$inferSelect;
export type NewPhoneNumberRow = Omit<typeof phoneNumbers.$inferInsert, 'clientId'>;

/** Phone numbers of one organization: every method takes the organization id first (by id, list, count, update: TenantRepository). */
export class PhoneNumberRepository extends TenantRepository<typeof phoneNumbers> {
  constructor(db: Executor) {
    super(db, phoneNumbers);
  }

  async insert(orgId: string, row: NewPhoneNumberRow): Promise<PhoneNumberRow> {
    const [created] = await this.db.insert(phoneNumbers).values({ ...row, clientId: orgId }).returning();
    return created!;
  }

  /** Any organization's: a number belongs to one organization at a time. */
  async numberTaken(phoneNumber: string): Promise<boolean> {
    const [row] = await this.db.select({ id: phoneNumbers.id }).from(phoneNumbers).where(eq(phoneNumbers.phoneNumber, phoneNumber)).limit(1);
    return row !== undefined;
  }

  existsElsewhere(orgId: string, id: string): Promise<boolean> {
    return belongsToAnotherOrganization(this.db, phoneNumbers, orgId, id);
  }

  /** Deletes only an unassigned number; undefined when it was assigned (or gone) meanwhile. */
  async deleteUnassigned(orgId: string, id: string): Promise<PhoneNumberRow | undefined> {
    const [row] = await this.db.delete(phoneNumbers).where(and(this.one(orgId, id), isNull(phoneNumbers.agentId))).returning();
    return row;
  }
}
