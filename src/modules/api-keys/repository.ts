import { and, count, eq, notInArray, sql } from 'drizzle-orm';
import type { Executor } from '../../db/database.ts';
import { apiKeys } from '../../db/schema/index.ts';
import { newestFirst } from '../../db/keyset.ts';

export type ApiKeyRow = typeof apiKeys.$inferSelect;
export type NewApiKeyRow = typeof apiKeys.$inferInsert;

/** API keys of one organization: every method takes the organization id first. */
export class ApiKeyRepository {
  readonly #db: Executor;
  constructor(db: Executor) {
    this.#db = db;
  }

  async insert(orgId: string, row: Omit<NewApiKeyRow, 'clientId'>): Promise<ApiKeyRow> {
    const [key] = await this.#db.insert(apiKeys).values({ ...row, clientId: orgId }).returning();
    return key!;
  }

  async findById(orgId: string, keyId: string): Promise<ApiKeyRow | undefined> {
    const [key] = await this.#db.select().from(apiKeys).where(and(eq(apiKeys.clientId, orgId), eq(apiKeys.id, keyId)));
    return key;
  }

  /** Newest first; `before` is the keyset position of the last row of the previous page. */
  async list(orgId: string, limit: number, before?: { at: Date; id: string }): Promise<ApiKeyRow[]> {
    const page = newestFirst(apiKeys, orgId, before);
    return this.#db
      .select()
      .from(apiKeys)
      .where(page.where)
      .orderBy(...page.orderBy)
      .limit(limit);
  }

  async count(orgId: string): Promise<number> {
    const [row] = await this.#db.select({ n: count() }).from(apiKeys).where(eq(apiKeys.clientId, orgId));
    return row?.n ?? 0;
  }

  /** Marks the key revoked; a key already revoked keeps its first revocation time. */
  async revoke(orgId: string, keyId: string): Promise<ApiKeyRow | undefined> {
    const [key] = await this.#db
      .update(apiKeys)
      .set({ status: 'revoked', revokedAt: sql`coalesce(${apiKeys.revokedAt}, now())` })
      .where(and(eq(apiKeys.clientId, orgId), eq(apiKeys.id, keyId)))
      .returning();
    return key;
  }

  /**
   * Revokes a user's active keys in the organization whose role is not among `keep` (all of them
   * when `keep` is empty): a member removed or demoted keeps no key above what they now hold.
   */
  async revokeUserKeys(orgId: string, userId: string, keep: readonly string[] = []): Promise<ApiKeyRow[]> {
    return this.#db
      .update(apiKeys)
      .set({ status: 'revoked', revokedAt: sql`now()` })
      .where(and(
        eq(apiKeys.clientId, orgId), eq(apiKeys.userId, userId), eq(apiKeys.status, 'active'),
        keep.length ? notInArray(apiKeys.role, [...keep]) : undefined,
      ))
      .returning();
  }
}
