import { and, desc, eq, gt, lte, sql } from 'drizzle-orm';
import type { Executor } from '../../db/database.ts';
import { invitations, memberships, users } from '../../db/schema/index.ts';

export type InvitationRow = typeof invitations.$inferSelect;

/** Invitations: organization-scoped methods take the organization id first. */
export class InvitationRepository {
  readonly #db: Executor;
  constructor(db: Executor) {
    this.#db = db;
  }

  /** Undefined when a pending invitation for the address exists already (the partial unique index). */
  async insert(orgId: string, row: { id: string; email: string; role: string; invitedBy: string; createdAt: Date; expiresAt: Date }): Promise<InvitationRow | undefined> {
    const [created] = await this.#db.insert(invitations).values({ ...row, clientId: orgId }).onConflictDoNothing().returning();
    return created;
  }

  /** Lapsed pending invitations of an address become `expired`, so a new one can be sent. */
  async expireLapsed(orgId: string, email: string, now: Date): Promise<void> {
    await this.#db
      .update(invitations)
      .set({ status: 'expired' })
      .where(and(eq(invitations.clientId, orgId), eq(invitations.email, email), eq(invitations.status, 'pending'), lte(invitations.expiresAt, now)));
  }

  async findById(orgId: string, id: string): Promise<InvitationRow | undefined> {
    const [row] = await this.#db.select().from(invitations).where(and(eq(invitations.clientId, orgId), eq(invitations.id, id)));
    return row;
  }

  /** By id alone: the invitee is not a member yet and names no organization. Locked for the accept transaction. */
  async findForAccept(id: string): Promise<InvitationRow | undefined> {
    const [row] = await this.#db.select().from(invitations).where(eq(invitations.id, id)).for('update');
    return row;
  }

  /** Across organizations: a sign-in is not in any organization yet. */
  async hasPendingFor(email: string, now: Date): Promise<boolean> {
    const [row] = await this.#db
      .select({ id: invitations.id })
      .from(invitations)
      .where(and(eq(invitations.email, email), eq(invitations.status, 'pending'), gt(invitations.expiresAt, now)))
      .limit(1);
    return row !== undefined;
  }

  async listPending(orgId: string, now: Date): Promise<InvitationRow[]> {
    return this.#db
      .select()
      .from(invitations)
      .where(and(eq(invitations.clientId, orgId), eq(invitations.status, 'pending'), gt(invitations.expiresAt, now)))
      .orderBy(desc(invitations.createdAt), desc(invitations.id));
  }

  /** Moves a pending invitation on; undefined when it was not pending any more. */
  async settle(orgId: string, id: string, changes: Partial<InvitationRow>): Promise<InvitationRow | undefined> {
    const [row] = await this.#db
      .update(invitations)
      .set(changes)
      .where(and(eq(invitations.clientId, orgId), eq(invitations.id, id), eq(invitations.status, 'pending')))
      .returning();
    return row;
  }

  async isMemberByEmail(orgId: string, email: string): Promise<boolean> {
    const [row] = await this.#db
      .select({ userId: memberships.userId })
      .from(memberships)
      .innerJoin(users, eq(users.id, memberships.userId))
      .where(and(eq(memberships.clientId, orgId), sql`lower(${users.email}) = ${email}`))
      .limit(1);
    return row !== undefined;
  }
}
