import { randomBytes } from 'node:crypto';
import type { Database } from '../../db/database.ts';
import type { IdempotencyClaim, IdempotencyScope, IdempotencyStore, KeptResponse } from '../../core/http/idempotency.ts';

/** How long a response is kept (contract: 24 hours). */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/**
 * How long a `running` key blocks others. Only a process that died mid-request leaves one behind
 * (every answered request settles its key); after this lease a retry may take it over.
 */
export const IDEMPOTENCY_LEASE_MS = 5 * 60 * 1000;

const CLAIM = `
  INSERT INTO idempotency_keys AS k (client_id, credential_id, key, fingerprint, status, lock_id, locked_at, created_at, expires_at)
  VALUES ($1, $2, $3, $4, 'running', $5, $6, $6, $7)
  ON CONFLICT (client_id, credential_id, key) DO UPDATE
     SET fingerprint = excluded.fingerprint, status = 'running', lock_id = excluded.lock_id, locked_at = excluded.locked_at,
         created_at = excluded.created_at, expires_at = excluded.expires_at,
         response_status = NULL, response_content_type = NULL, response_body = NULL
   WHERE k.expires_at <= excluded.locked_at OR (k.status = 'running' AND k.locked_at <= $8)
  RETURNING lock_id`;

const EXISTING = `
  SELECT fingerprint, status, response_status, response_content_type, response_body
    FROM idempotency_keys WHERE client_id = $1 AND credential_id = $2 AND key = $3`;

interface ExistingRow {
  fingerprint: string;
  status: string;
  response_status: number | null;
  response_content_type: string | null;
  response_body: string | null;
}

/**
 * Idempotency keys in PostgreSQL. Claiming is one statement: an insert that takes the key when it is
 * free, expired, or held past its lease by a request that never settled; concurrent claims of one
 * key are serialized by its primary key, so exactly one of them acquires it.
 */
export class IdempotencyService implements IdempotencyStore {
  readonly #database: Pick<Database, 'prepared'>;
  readonly #now: () => Date;
  constructor(deps: { database: Pick<Database, 'prepared'>; now?: () => Date }) {
    this.#database = deps.database;
    this.#now = deps.now ?? (() => new Date());
  }

  async claim(scope: IdempotencyScope, fingerprint: string): Promise<IdempotencyClaim> {
    const id = [scope.orgId, scope.credentialId, scope.key];
    // A key released between the failed insert and the read is free again: try once more.
    for (let attempt = 0; attempt < 3; attempt++) {
      const now = this.#now();
      const lockId = randomBytes(12).toString('base64url');
      const taken = await this.#database.prepared<{ lock_id: string }>('idempotency_claim', CLAIM, [
        ...id, fingerprint, lockId, now, new Date(now.getTime() + IDEMPOTENCY_TTL_MS), new Date(now.getTime() - IDEMPOTENCY_LEASE_MS),
      ]);
      if (taken[0]?.lock_id === lockId) return { kind: 'acquired', lockId };
      const [row] = await this.#database.prepared<ExistingRow>('idempotency_existing', EXISTING, id);
      if (!row) continue;
      if (row.fingerprint !== fingerprint) return { kind: 'reused' };
      if (row.status !== 'completed') return { kind: 'in_use' };
      return { kind: 'replay', response: { status: row.response_status!, contentType: row.response_content_type, body: row.response_body ?? '' } };
    }
    return { kind: 'in_use' };
  }

  async complete(scope: IdempotencyScope, lockId: string, response: KeptResponse): Promise<void> {
    await this.#database.prepared('idempotency_complete',
      `UPDATE idempotency_keys SET status = 'completed', response_status = $5, response_content_type = $6, response_body = $7
        WHERE client_id = $1 AND credential_id = $2 AND key = $3 AND lock_id = $4 AND status = 'running'`,
      [scope.orgId, scope.credentialId, scope.key, lockId, response.status, response.contentType, response.body]);
  }

  async release(scope: IdempotencyScope, lockId: string): Promise<void> {
    await this.#database.prepared('idempotency_release',
      'DELETE FROM idempotency_keys WHERE client_id = $1 AND credential_id = $2 AND key = $3 AND lock_id = $4',
      [scope.orgId, scope.credentialId, scope.key, lockId]);
  }

  /** The cleanup job: keys past their 24 hours. Returns how many were deleted. */
  async deleteExpired(now: Date = this.#now()): Promise<number> {
    const rows = await this.#database.prepared<{ n: number }>('idempotency_cleanup',
      'WITH gone AS (DELETE FROM idempotency_keys WHERE expires_at <= $1 RETURNING 1) SELECT count(*)::int AS n FROM gone', [now]);
    return rows[0]?.n ?? 0;
  }
}
