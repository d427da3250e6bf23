import { and, asc, count, eq, isNull, sql } from 'drizzle-orm';
import { orgKeyset } from '../../db/keyset.ts';
import type { Executor } from '../../db/database.ts';
import { memberships, organizations, users } from '../../db/schema/index.ts';
import type { Role } from '../../core/permissions.ts';

const BOOTSTRAP_LOCK = 7314002;

export type OrganizationRow = typeof organizations.$inferSelect;
export type UserRow = typeof users.$inferSelect;
export interface MemberRow {
  userId: string;
  email: string | null;
  role: string;
  createdAt: Date;
}

/** Organizations, users and memberships. Membership queries take the organization id first. */
export class OrganizationRepository {
  readonly #db: Executor;
  constructor(db: Executor) {
    this.#db = db;
  }

  async insertOrganization(row: { id: string; name: string }): Promise<OrganizationRow> {
    const [org] = await this.#db.insert(organizations).values(row).returning();
    return org!;
  }

  async findOrganization(orgId: string): Promise<OrganizationRow | undefined> {
    const [org] = await this.#db.select().from(organizations).where(eq(organizations.id, orgId));
    return org;
  }

  /** Held to the end of the transaction: two servers starting together on an empty database bootstrap once. */
  async lockBootstrap(): Promise<void> {
    await this.#db.execute(sql`SELECT pg_advisory_xact_lock(${BOOTSTRAP_LOCK})`);
  }

  async countOrganizations(): Promise<number> {
    const [row] = await this.#db.select({ n: count() }).from(organizations);
    return row?.n ?? 0;
  }

  async insertMembership(orgId: string, userId: string, role: Role): Promise<void> {
    await this.#db.insert(memberships).values({ clientId: orgId, userId, role });
  }

  async findMembershipRole(orgId: string, userId: string): Promise<string | undefined> {
    const [row] = await this.#db
      .select({ role: memberships.role })
      .from(memberships)
      .where(and(eq(memberships.clientId, orgId), eq(memberships.userId, userId)));
    return row?.role;
  }

  async adminEmails(orgId: string): Promise<string[]> {
    const rows = await this.#db
      .select({ email: users.email })
      .from(memberships)
      .innerJoin(users, eq(users.id, memberships.userId))
      .where(and(eq(memberships.clientId, orgId), eq(memberships.role, 'admin')));
    return rows.map((r) => r.email).filter((e): e is string => !!e);
  }

  /** Locks the organization's admin memberships (the last-admin rule counts them under this lock). */
  async lockAdmins(orgId: string): Promise<string[]> {
    const rows = await this.#db
      .select({ userId: memberships.userId })
      .from(memberships)
      .where(and(eq(memberships.clientId, orgId), eq(memberships.role, 'admin')))
      .orderBy(asc(memberships.userId))
      .for('update');
    return rows.map((r) => r.userId);
  }

  async findMember(orgId: string, userId: string): Promise<MemberRow | undefined> {
    const [row] = await this.#db
      .select({ userId: memberships.userId, email: users.email, role: memberships.role, createdAt: memberships.createdAt })
      .from(memberships)
      .innerJoin(users, eq(users.id, memberships.userId))
      .where(and(eq(memberships.clientId, orgId), eq(memberships.userId, userId)))
      .for('update', { of: memberships });
    return row;
  }

  async updateMembershipRole(orgId: string, userId: string, role: Role): Promise<void> {
    await this.#db.update(memberships).set({ role, updatedAt: new Date() }).where(and(eq(memberships.clientId, orgId), eq(memberships.userId, userId)));
  }

  async deleteMembership(orgId: string, userId: string): Promise<void> {
    await this.#db.delete(memberships).where(and(eq(memberships.clientId, orgId), eq(memberships.userId, userId)));
  }

  /** Members ordered by join time then id; `after` is the keyset position of the previous page. */
  async listMembers(orgId: string, limit: number, after?: { at: Date; id: string }): Promise<MemberRow[]> {
    const page = orgKeyset({ clientId: memberships.clientId, sort: memberships.createdAt, id: memberships.userId }, orgId, {
      direction: 'asc', after: after && { value: after.at, id: after.id },
    });
    return this.#db
      .select({ userId: memberships.userId, email: users.email, role: memberships.role, createdAt: memberships.createdAt })
      .from(memberships)
      .innerJoin(users, eq(users.id, memberships.userId))
      .where(page.where)
      .orderBy(...page.orderBy)
      .limit(limit);
  }

  async countMembers(orgId: string): Promise<number> {
    const [row] = await this.#db.select({ n: count() }).from(memberships).where(eq(memberships.clientId, orgId));
    return row?.n ?? 0;
  }

  /** Every organization the user belongs to, with its name and the user's role. */
  async membershipsOfUser(userId: string) {
    return this.#db
      .select({ organizationId: organizations.id, name: organizations.name, role: memberships.role, joinedAt: memberships.createdAt })
      .from(memberships)
      .innerJoin(organizations, eq(organizations.id, memberships.clientId))
      .where(eq(memberships.userId, userId))
      .orderBy(asc(memberships.createdAt));
  }

  async insertUser(row: { id: string; subject: string | null; email: string | null }): Promise<UserRow> {
    const [user] = await this.#db.insert(users).values(row).returning();
    return user!;
  }

  async findUser(userId: string): Promise<UserRow | undefined> {
    const [user] = await this.#db.select().from(users).where(eq(users.id, userId));
    return user;
  }

  async findUserBySubject(subject: string): Promise<UserRow | undefined> {
    const [user] = await this.#db.select().from(users).where(eq(users.subject, subject));
    return user;
  }

  /** Inserts the user for a subject, or returns the one a concurrent request inserted first. */
  async upsertUserBySubject(row: { id: string; subject: string; email: string | null }): Promise<UserRow> {
    const [inserted] = await this.#db.insert(users).values(row).onConflictDoNothing().returning();
    return inserted ?? (await this.findUserBySubject(row.subject))!;
  }

  /**
   * Binds a subject to a user created by email alone (CLI, invitation) who has not signed in yet.
   * Returns undefined when there is no such user.
   */
  async claimUserByEmail(email: string, subject: string): Promise<UserRow | undefined> {
    const [candidate] = await this.#db
      .select({ id: users.id })
      .from(users)
      .where(and(eq(users.email, email), isNull(users.subject)))
      .orderBy(asc(users.createdAt))
      .limit(1);
    if (!candidate) return undefined;
    const [claimed] = await this.#db
      .update(users)
      .set({ subject, updatedAt: new Date() })
      .where(and(eq(users.id, candidate.id), isNull(users.subject)))
      .returning();
    return claimed;
  }

  /** Users with the address, oldest first. */
  async usersByEmail(email: string): Promise<UserRow[]> {
    return this.#db.select().from(users).where(eq(users.email, email)).orderBy(asc(users.createdAt));
  }

  async updateUserEmail(userId: string, email: string): Promise<void> {
    await this.#db.update(users).set({ email, updatedAt: new Date() }).where(eq(users.id, userId));
  }
}
