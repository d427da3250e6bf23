import type { Database } from '../../db/database.ts';
import type { ApiKeyLookup, KeyCredential } from '../../core/auth/ports.ts';

/**
 * The api-keys module's side of authentication. The one lookup that cannot take an organization
 * id: a key is found by the hash of the presented secret (globally unique), and only then is its
 * organization known. Plain SQL as a prepared statement, because it runs on every request.
 */
export class ApiKeyCredentials implements ApiKeyLookup {
  readonly #database: Pick<Database, 'pool' | 'prepared'>;
  constructor(deps: { database: Pick<Database, 'pool' | 'prepared'> }) {
    this.#database = deps.database;
  }

  async findByHash(keyHash: string): Promise<KeyCredential | undefined> {
    const [row] = await this.#database.prepared<KeyCredential>(
      'auth_key_by_hash',
      `SELECT id, client_id AS "clientId", user_id AS "userId", name, role, status,
              expires_at AS "expiresAt", last_used_at AS "lastUsedAt", scopes, allowed_ips AS "allowedIps"
         FROM api_keys WHERE key_hash = $1`,
      [keyHash],
    );
    return row;
  }

  async recordUse(keyId: string): Promise<void> {
    await this.#database.pool.query(
      `UPDATE api_keys SET last_used_at = now()
        WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`,
      [keyId],
    );
  }
}
