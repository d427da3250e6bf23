import { and, count, eq, notInArray, sql } from 'drizzle-orm';
import type pg from 'pg';
import type { Database, Executor } from '../../db/database.ts';
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
    const page = newestFirst(apiKeys.createdAt, apiKeys.id, before);
    return this.#db
      .select()
      .from(apiKeys)
      .where(and(eq(apiKeys.clientId, orgId), page.after))
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
  async revokeUserKeys(orgId: string, userId: string, keep: readonly string[] = []): Promise<number> {
    const rows = await this.#db
      .update(apiKeys)
      .set({ status: 'revoked', revokedAt: sql`now()` })
      .where(and(
        eq(apiKeys.clientId, orgId), eq(apiKeys.userId, userId), eq(apiKeys.status, 'active'),
        keep.length ? notInArray(apiKeys.role, [...keep]) : undefined,
      ))
      .returning({ id: apiKeys.id });
    return rows.length;
  }
}

/** What authentication needs of a key, fetched on every request. */
export interface KeyCredential {
  id: string;
  clientId: string;
  userId: string;
  role: string;
  status: string;
  expiresAt: Date | null;
  lastUsedAt: Date | null;
}

/**
 * The one lookup that cannot take an organization id: authentication finds a key by the hash of
 * the presented secret (globally unique), and only then learns its organization. Plain SQL on the
 * pool because it runs on every request.
 */
export async function findKeyCredential(database: Pick<Database, 'prepared'>, keyHash: string): Promise<KeyCredential | undefined> {
  const [row] = await database.prepared<KeyCredential>(
    'auth_key_by_hash',
    `SELECT id, client_id AS "clientId", user_id AS "userId", role, status,
            expires_at AS "expiresAt", last_used_at AS "lastUsedAt"
       FROM api_keys WHERE key_hash = $1`,
    [keyHash],
  );
  return row;
}

/** Records use to the minute: the guard makes a racing second write a no-op. */
export async function touchKeyLastUsed(pool: pg.Pool, keyId: string): Promise<void> {
  await pool.query(
    `UPDATE api_keys SET last_used_at = now()
      WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`,
    [keyId],
  );
}
