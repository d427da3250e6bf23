import { randomUUID } from 'node:crypto';
import type { Database } from '../../db/database.ts';
import { InFlightBatcher } from '../../core/in-flight-batcher.ts';
import type { PendingWrites } from '../../db/pending-write.ts';
import { IdempotencyKeyQueries, type ClaimTimes } from './key-queries.ts';
import { Errors } from '../../core/errors.ts';
import { answerOf, type IdempotencyClaim, type IdempotencyScope, type IdempotencyStore, type KeptKey, type KeptResponse } from '../../core/http/idempotency.ts';

/** How long a response is kept (contract: 24 hours). */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/**
 * How long a `running` key blocks others without its process renewing it (every IDEMPOTENCY_RENEW_MS
 * while its request runs). Only a process that died mid-request leaves one behind; after the lease
 * a retry takes it over and runs. That never runs a change twice: a change commits in one transaction
 * with its key's completion (or `committed` mark), fenced by the key's lock id, so a `running` key's
 * change never committed, and a change whose key was taken over rolls back.
 */
export const IDEMPOTENCY_LEASE_MS = 15_000;
const IDEMPOTENCY_RENEW_MS = 5_000;

type KeyOperation =
  | { kind: 'claim'; scope: IdempotencyScope; fingerprint: string; lockId: string }
  | { kind: 'complete'; scope: IdempotencyScope; lockId: string; response: KeptResponse };

const scopeKey = (s: IdempotencyScope) => `${s.orgId}\u0000${s.credentialId}\u0000${s.key}`;

/** The operations in key order, each with its key. */
function inKeyOrder<T extends KeyOperation>(operations: T[]): Array<{ key: string; op: T }> {
  return operations.map((op) => ({ key: scopeKey(op.scope), op })).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/**
 * Idempotency keys in PostgreSQL. A keyed write costs a claim before it runs; its response is sealed
 * into its own transaction (`seal`, one statement before the COMMIT), or, when it had none, kept after
 * (`complete`). Claims and after-the-fact responses go through one batcher (in-flight-batcher.ts):
 * under load they share one statement, so its round trip and commit are paid once per batch; an idle
 * server sends each at once. Every request still gets its own outcome, and a response is kept
 * (durably) before it is sent.
 */
export class IdempotencyService implements IdempotencyStore {
  readonly #keys: IdempotencyKeyQueries;
  readonly #now: () => Date;
  readonly #operations = new InFlightBatcher<KeyOperation, boolean>((operations) => this.#run(operations));
  /** The keys this process's requests hold, by lock id, whose lease it renews. */
  readonly #held = new Map<string, IdempotencyScope>();
  #renewal: NodeJS.Timeout | undefined;
  constructor(deps: { database: Pick<Database, 'prepared'>; now?: () => Date }) {
    this.#keys = new IdempotencyKeyQueries(deps.database);
    this.#now = deps.now ?? (() => new Date());
  }

  #hold(scope: IdempotencyScope, lockId: string): void {
    this.#held.set(lockId, scope);
    this.#renewal ??= setInterval(() => void this.#renew(), IDEMPOTENCY_RENEW_MS).unref();
  }

  #let(lockId: string): void {
    this.#held.delete(lockId);
    if (this.#held.size === 0 && this.#renewal) {
      clearInterval(this.#renewal);
      this.#renewal = undefined;
    }
  }

  async #renew(): Promise<void> {
    const held = [...this.#held];
    if (!held.length) return;
    await this.#keys.renew(held, this.#now()).catch(() => {}); // a missed renewal is retried at the next tick; the lease is three ticks
  }

  async claim(scope: IdempotencyScope, fingerprint: string): Promise<IdempotencyClaim> {
    // A key released between the failed insert and the read is free again: try once more.
    for (let attempt = 0; attempt < 3; attempt++) {
      // randomUUID draws from a cached pool of entropy; randomBytes asks the system every call.
      const lockId = randomUUID();
      if (await this.#operations.submit({ kind: 'claim', scope, fingerprint, lockId })) {
        this.#hold(scope, lockId);
        return { kind: 'acquired', lockId };
      }
      const row = await this.existing(scope);
      if (!row) continue;
      return answerOf(row, fingerprint);
    }
    return { kind: 'in_use' };
  }

  keepIn(unit: PendingWrites, scope: IdempotencyScope, fingerprint: string, lockId: string, response: KeptResponse | undefined, taken: () => never): void {
    unit.defer({ ...this.#keys.keepWrite({ scope, fingerprint, lockId }, response, this.#times()), check: (rows) => rows > 0 || taken() });
  }

  async keep(scope: IdempotencyScope, fingerprint: string, lockId: string, response: KeptResponse | undefined): Promise<boolean> {
    return this.#keys.keep({ scope, fingerprint, lockId }, response, this.#times());
  }

  async existing(scope: IdempotencyScope): Promise<KeptKey | undefined> {
    const row = await this.#keys.existing(scope);
    if (!row) return undefined;
    const response = row.status === 'completed'
      ? { status: row.response_status!, contentType: row.response_content_type, body: row.response_body ?? '' }
      : undefined;
    return { fingerprint: row.fingerprint, response };
  }

  async complete(scope: IdempotencyScope, lockId: string, response: KeptResponse): Promise<void> {
    this.#let(lockId);
    await this.#operations.submit({ kind: 'complete', scope, lockId, response });
  }

  seal(unit: PendingWrites, scope: IdempotencyScope, lockId: string, response: KeptResponse | undefined): void {
    unit.defer({
      ...this.#keys.sealWrite(scope, lockId, response),
      check: (rows) => {
        if (!rows) throw Errors.conflict('idempotency_key_in_use', 'A retry with this Idempotency-Key took it over while this request ran; this request changed nothing');
        if (response) this.#let(lockId);
      },
    });
  }

  /**
   * Runs a batch; for each claim whether it acquired its key. A key claimed twice in the batch, or
   * claimed while its response is being kept, is claimed in no statement: answered "not acquired",
   * the request reads the key (and finds it running, or its response).
   */
  async #run(operations: KeyOperation[]): Promise<boolean[]> {
    const [only] = operations;
    if (operations.length === 1 && only!.kind === 'claim') return [await this.#keys.claimOne(only, this.#times())];
    const keyed = inKeyOrder(operations.filter((o) => o.kind === 'complete'));
    const completions = keyed.map((c) => c.op);
    const busy = new Set(keyed.map((c) => c.key));
    const claims = [];
    for (const { key, op } of inKeyOrder(operations.filter((o) => o.kind === 'claim'))) {
      if (busy.has(key)) continue;
      busy.add(key);
      claims.push(op);
    }
    const acquired = await this.#keys.operations(claims, completions, this.#times());
    return operations.map((o) => o.kind === 'complete' || acquired.has(o.lockId));
  }

  #times(): ClaimTimes {
    const now = this.#now();
    return { now, expiresAt: new Date(now.getTime() + IDEMPOTENCY_TTL_MS), leaseLapsedBefore: new Date(now.getTime() - IDEMPOTENCY_LEASE_MS) };
  }

  async release(scope: IdempotencyScope, lockId: string): Promise<void> {
    this.#let(lockId);
    await this.#keys.release(scope, lockId);
  }

  /** The cleanup job: keys past their 24 hours. Returns how many were deleted. */
  async deleteExpired(now: Date = this.#now()): Promise<number> {
    return this.#keys.deleteExpired(now);
  }
}
