import { and, count, eq, gt, isNull } from 'drizzle-orm';
import type { Executor } from '../../db/database.ts';
import { signInLinks, userSessions } from '../../db/schema/index.ts';

export type SessionRow = typeof userSessions.$inferSelect;

/**
 * Sign-in links and console sessions. Neither belongs to an organization: a person signs in first and
 * chooses an organization after, so these queries take the address or the session id.
 */
export class SessionRepository {
  readonly #db: Executor;
  constructor(db: Executor) {
    this.#db = db;
  }

  async insertLink(row: { id: string; email: string; tokenHash: string; expiresAt: Date }): Promise<void> {
    await this.#db.insert(signInLinks).values(row);
  }

  async countLinksSince(email: string, since: Date): Promise<number> {
    const [row] = await this.#db.select({ n: count() }).from(signInLinks).where(and(eq(signInLinks.email, email), gt(signInLinks.createdAt, since)));
    return row?.n ?? 0;
  }

  /** Marks the link used and returns its address; undefined when unknown, used or expired (one winner under races). */
  async consumeLink(tokenHash: string, now: Date): Promise<string | undefined> {
    const [row] = await this.#db
      .update(signInLinks)
      .set({ usedAt: now })
      .where(and(eq(signInLinks.tokenHash, tokenHash), isNull(signInLinks.usedAt), gt(signInLinks.expiresAt, now)))
      .returning({ email: signInLinks.email });
    return row?.email;
  }

  async insertSession(row: { id: string; email: string; subject: string; refreshHash: string; expiresAt: Date }): Promise<void> {
    await this.#db.insert(userSessions).values(row);
  }

  /** The session if it is neither revoked nor expired. */
  async findLiveSession(id: string, now: Date): Promise<SessionRow | undefined> {
    const [row] = await this.#db
      .select()
      .from(userSessions)
      .where(and(eq(userSessions.id, id), isNull(userSessions.revokedAt), gt(userSessions.expiresAt, now)));
    return row;
  }

  async touchSession(id: string, now: Date): Promise<void> {
    await this.#db.update(userSessions).set({ lastRefreshedAt: now }).where(eq(userSessions.id, id));
  }

  async revokeSession(id: string, now: Date): Promise<void> {
    await this.#db.update(userSessions).set({ revokedAt: now }).where(and(eq(userSessions.id, id), isNull(userSessions.revokedAt)));
  }
}
