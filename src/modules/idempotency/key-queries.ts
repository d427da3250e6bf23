import type { Database } from '../../db/database.ts';
import type { PendingWrite } from '../../db/pending-write.ts';
import type { IdempotencyScope, KeptResponse } from '../../core/http/idempotency.ts';

/**
 * The claim's rule, shared by both claim statements: a key is taken when it is free, expired ($6 is
 * the claim's time), or held past its lease ($8) by a request that never settled.
 */
const TAKE_KEY_ON_CONFLICT = `ON CONFLICT (client_id, credential_id, key) DO UPDATE
     SET fingerprint = excluded.fingerprint, status = 'running', lock_id = excluded.lock_id, locked_at = excluded.locked_at,
         created_at = excluded.created_at, expires_at = excluded.expires_at,
         response_status = NULL, response_content_type = NULL, response_body = NULL
   WHERE k.expires_at <= excluded.locked_at OR (k.status = 'running' AND k.locked_at <= $8)
  RETURNING lock_id`;

/**
 * One batch of key operations (InFlightBatcher), as one statement: the responses of requests that
 * finished are kept, each only while its request still holds the key; and keys are claimed, each
 * taken when it is free, expired, or held past its lease by a request that never settled.
 * Concurrent claims of one key are serialized by its primary key, so exactly one acquires it. The
 * two parts never touch one row (a claim of a key being completed in the batch is not sent), and
 * rows go in key order.
 */
const KEY_OPERATIONS = `
  WITH completed AS (
    UPDATE idempotency_keys AS k
       SET status = 'completed', response_status = v.s, response_content_type = v.ct, response_body = v.b
      FROM unnest($9::text[], $10::text[], $11::text[], $12::text[], $13::int[], $14::text[], $15::text[]) AS v(c, cr, ky, l, s, ct, b)
     WHERE k.client_id = v.c AND k.credential_id = v.cr AND k.key = v.ky AND k.lock_id = v.l AND k.status IN ('running', 'committed')
  )
  INSERT INTO idempotency_keys AS k (client_id, credential_id, key, fingerprint, status, lock_id, locked_at, created_at, expires_at)
  SELECT c, cr, ky, f, 'running', l, $6, $6, $7 FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) AS v(c, cr, ky, f, l)
  ${TAKE_KEY_ON_CONFLICT}`;

/**
 * KEY_OPERATIONS for a batch of one claim, the usual case below saturation: the same rule on one row
 * without the arrays and the empty completion part, which cost PostgreSQL twice the CPU (about 460
 * against 230 µs a claim on one backend, its /proc CPU over 3 × 3,000 claims; Node 250 against 170 µs).
 */
const CLAIM_ONE = `
  INSERT INTO idempotency_keys AS k (client_id, credential_id, key, fingerprint, status, lock_id, locked_at, created_at, expires_at)
  VALUES ($1, $2, $3, $4, 'running', $5, $6, $6, $7)
  ${TAKE_KEY_ON_CONFLICT}`;

/**
 * In the change's transaction, before its COMMIT: the key is `completed` with its response, or, when
 * the response is not known yet, `committed` (kept after the fact). Only while this request still
 * holds the key: no row means it was taken over, and the change must roll back.
 */
const SEAL = `
  UPDATE idempotency_keys
     SET status = CASE WHEN $5::int IS NULL THEN 'committed' ELSE 'completed' END,
         response_status = $5, response_content_type = $6, response_body = $7
   WHERE client_id = $1 AND credential_id = $2 AND key = $3 AND lock_id = $4 AND status IN ('running', 'committed')
  RETURNING 1 AS sealed`;

/**
 * A key taken at its change's commit (routes whose whole effect is one transaction): the key with its
 * response in one statement, inside that transaction, or on its own when the request had none. It
 * takes the key when it is free, expired, held past its lease, or already this request's own (an
 * earlier transaction of the request committed it without its response). No row: another request
 * has the key, and this request's change must roll back.
 */
const KEEP = `
  INSERT INTO idempotency_keys AS k (client_id, credential_id, key, fingerprint, status, lock_id, locked_at, created_at, expires_at,
                                     response_status, response_content_type, response_body)
  VALUES ($1, $2, $3, $4, CASE WHEN $8::int IS NULL THEN 'committed' ELSE 'completed' END, $5, $6, $6, $7, $8, $9, $10)
  ON CONFLICT (client_id, credential_id, key) DO UPDATE
     SET fingerprint = excluded.fingerprint, status = excluded.status, lock_id = excluded.lock_id, locked_at = excluded.locked_at,
         created_at = excluded.created_at, expires_at = excluded.expires_at, response_status = excluded.response_status,
         response_content_type = excluded.response_content_type, response_body = excluded.response_body
   WHERE k.lock_id = excluded.lock_id OR k.expires_at <= excluded.locked_at OR (k.status = 'running' AND k.locked_at <= $11)
  RETURNING 1 AS kept`;

/** The lease of keys whose requests still run (see IDEMPOTENCY_LEASE_MS). */
const RENEW = `
  UPDATE idempotency_keys AS k SET locked_at = $5
    FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS v(c, cr, ky, l)
   WHERE k.client_id = v.c AND k.credential_id = v.cr AND k.key = v.ky AND k.lock_id = v.l AND k.status = 'running'`;

const EXISTING = `
  SELECT fingerprint, status, response_status, response_content_type, response_body
    FROM idempotency_keys WHERE client_id = $1 AND credential_id = $2 AND key = $3`;

export interface ExistingRow {
  fingerprint: string;
  status: string;
  response_status: number | null;
  response_content_type: string | null;
  response_body: string | null;
}

/** The times a claim is judged by: when it is made, when its key expires, and before when a `running` key's lease has lapsed. */
export interface ClaimTimes {
  now: Date;
  expiresAt: Date;
  leaseLapsedBefore: Date;
}

export interface ClaimRow {
  scope: IdempotencyScope;
  fingerprint: string;
  lockId: string;
}

export interface CompletionRow {
  scope: IdempotencyScope;
  lockId: string;
  response: KeptResponse;
}

/** The idempotency_keys table's statements, each a prepared statement (they are on every keyed write's path). */
export class IdempotencyKeyQueries {
  readonly #database: Pick<Database, 'prepared'>;
  constructor(database: Pick<Database, 'prepared'>) {
    this.#database = database;
  }

  /** One batch: the completions kept, the claims tried; the lock ids of the claims that took their key. */
  async operations(claims: ClaimRow[], completions: CompletionRow[], times: ClaimTimes): Promise<Set<string>> {
    const taken = await this.#database.prepared<{ lock_id: string }>('idempotency_operations', KEY_OPERATIONS, [
      claims.map((c) => c.scope.orgId), claims.map((c) => c.scope.credentialId), claims.map((c) => c.scope.key),
      claims.map((c) => c.fingerprint), claims.map((c) => c.lockId),
      times.now, times.expiresAt, times.leaseLapsedBefore,
      completions.map((c) => c.scope.orgId), completions.map((c) => c.scope.credentialId), completions.map((c) => c.scope.key),
      completions.map((c) => c.lockId), completions.map((c) => c.response.status), completions.map((c) => c.response.contentType),
      completions.map((c) => c.response.body),
    ]);
    return new Set(taken.map((r) => r.lock_id));
  }

  /** A lone claim; whether it took its key. */
  async claimOne(claim: ClaimRow, times: ClaimTimes): Promise<boolean> {
    const taken = await this.#database.prepared('idempotency_claim_one', CLAIM_ONE, [
      claim.scope.orgId, claim.scope.credentialId, claim.scope.key, claim.fingerprint, claim.lockId, times.now, times.expiresAt, times.leaseLapsedBefore,
    ]);
    return taken.length === 1;
  }

  /** The key's seal, for the change's transaction (its pending writes): it returns a row only while the request holds the key. */
  sealWrite(scope: IdempotencyScope, lockId: string, response: KeptResponse | undefined): PendingWrite {
    return {
      name: 'idempotency_seal', text: SEAL,
      values: [scope.orgId, scope.credentialId, scope.key, lockId, response?.status ?? null, response?.contentType ?? null, response?.body ?? null],
    };
  }

  /** The key taken with its response (KEEP), for the change's transaction: it returns a row when it took the key. */
  keepWrite(claim: ClaimRow, response: KeptResponse | undefined, times: ClaimTimes): PendingWrite {
    return {
      name: 'idempotency_keep', text: KEEP,
      values: [
        claim.scope.orgId, claim.scope.credentialId, claim.scope.key, claim.fingerprint, claim.lockId, times.now, times.expiresAt,
        response?.status ?? null, response?.contentType ?? null, response?.body ?? null, times.leaseLapsedBefore,
      ],
    };
  }

  /** KEEP on its own (a request that had no transaction to ride); whether it took the key. */
  async keep(claim: ClaimRow, response: KeptResponse | undefined, times: ClaimTimes): Promise<boolean> {
    const write = this.keepWrite(claim, response, times);
    return (await this.#database.prepared(write.name!, write.text, write.values)).length > 0;
  }

  async existing(scope: IdempotencyScope): Promise<ExistingRow | undefined> {
    const [row] = await this.#database.prepared<ExistingRow>('idempotency_existing', EXISTING, [scope.orgId, scope.credentialId, scope.key]);
    return row;
  }

  /** Renews the lease of the held keys, by lock id. */
  async renew(held: Array<[string, IdempotencyScope]>, at: Date): Promise<void> {
    await this.#database.prepared('idempotency_renew', RENEW, [
      held.map(([, s]) => s.orgId), held.map(([, s]) => s.credentialId), held.map(([, s]) => s.key), held.map(([l]) => l), at,
    ]);
  }

  async release(scope: IdempotencyScope, lockId: string): Promise<void> {
    await this.#database.prepared('idempotency_release',
      'DELETE FROM idempotency_keys WHERE client_id = $1 AND credential_id = $2 AND key = $3 AND lock_id = $4',
      [scope.orgId, scope.credentialId, scope.key, lockId]);
  }

  async deleteExpired(now: Date): Promise<number> {
    const rows = await this.#database.prepared<{ n: number }>('idempotency_cleanup',
      'WITH gone AS (DELETE FROM idempotency_keys WHERE expires_at <= $1 RETURNING 1) SELECT count(*)::int AS n FROM gone', [now]);
    return rows[0]?.n ?? 0;
  }
}
