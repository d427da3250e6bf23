import { and, count, eq, isNull } from 'drizzle-orm';
import type { Executor } from '../../db/database.ts';
import { newestFirst } from '../../db/keyset.ts';
import { belongsToAnotherOrganization } from '../../db/ownership.ts';
import { phoneNumbers } from '../../db/schema/index.ts';

export type PhoneNumberRow = typeof phoneNumbers.$inferSelect;
export type NewPhoneNumberRow = Omit<typeof phoneNumbers.$inferInsert, 'clientId'>;

/** Phone numbers of one organization: every method takes the organization id first. */
export class PhoneNumberRepository {
  readonly #db: Executor;
  constructor(db: Executor) {
    this.#db = db;
  }

  async insert(orgId: string, row: NewPhoneNumberRow): Promise<PhoneNumberRow> {
    const [created] = await this.#db.insert(phoneNumbers).values({ ...row, clientId: orgId }).returning();
    return created!;
  }

  async findById(orgId: string, id: string, options: { forUpdate?: boolean } = {}): Promise<PhoneNumberRow | undefined> {
    const query = this.#db.select().from(phoneNumbers).where(and(eq(phoneNumbers.clientId, orgId), eq(phoneNumbers.id, id)));
    const [row] = options.forUpdate ? await query.for('update') : await query;
    return row;
  }

  /** Any organization's: a number belongs to one organization at a time. */
  async numberTaken(phoneNumber: string): Promise<boolean> {
    const [row] = await this.#db.select({ id: phoneNumbers.id }).from(phoneNumbers).where(eq(phoneNumbers.phoneNumber, phoneNumber)).limit(1);
    return row !== undefined;
  }

  existsElsewhere(orgId: string, id: string): Promise<boolean> {
    return belongsToAnotherOrganization(this.#db, phoneNumbers, orgId, id);
  }

  async list(orgId: string, limit: number, before?: { at: Date; id: string }): Promise<PhoneNumberRow[]> {
    const page = newestFirst(phoneNumbers, orgId, before);
    return this.#db.select().from(phoneNumbers).where(page.where).orderBy(...page.orderBy).limit(limit);
  }

  async count(orgId: string): Promise<number> {
    const [row] = await this.#db.select({ n: count() }).from(phoneNumbers).where(eq(phoneNumbers.clientId, orgId));
    return row?.n ?? 0;
  }

  async update(orgId: string, id: string, changes: Partial<NewPhoneNumberRow>): Promise<PhoneNumberRow | undefined> {
    const [row] = await this.#db
      .update(phoneNumbers)
      .set({ ...changes, updatedAt: new Date() })
      .where(and(eq(phoneNumbers.clientId, orgId), eq(phoneNumbers.id, id)))
      .returning();
    return row;
  }

  /** Deletes only an unassigned number; undefined when it was assigned (or gone) meanwhile. */
  async deleteUnassigned(orgId: string, id: string): Promise<PhoneNumberRow | undefined> {
    const [row] = await this.#db
      .delete(phoneNumbers)
      .where(and(eq(phoneNumbers.clientId, orgId), eq(phoneNumbers.id, id), isNull(phoneNumbers.agentId)))
      .returning();
    return row;
  }
}
