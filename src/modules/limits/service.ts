import type { Static } from 'typebox';
import type { Db, Executor } from '../../db/database.ts';
import type { RequestContext } from '../../core/context.ts';
import { Errors } from '../../core/errors.ts';
import { LimitsRepository } from './repository.ts';
import { MAX_CONCURRENT_CALLS_CEILING, type Limits } from './schemas.ts';

/** How long a client refused for concurrency is told to wait: calls last minutes, a slot frees at any moment. */
export const CONCURRENCY_RETRY_AFTER_SECONDS = 5;

/**
 * Per-organization limits (extensions.md §6). The concurrency limit is enforced by `admitCall`
 * inside the transaction that inserts the call, on every path that creates one (runtime report,
 * dial, carrier voice webhook), so concurrent creations can never exceed it.
 */
export class LimitsService {
  readonly #db: Db;
  readonly #rateLimitPerMinute: number;
  constructor(deps: { db: Db; rateLimitPerMinute: number }) {
    this.#db = deps.db;
    this.#rateLimitPerMinute = deps.rateLimitPerMinute;
  }

  async get(ctx: RequestContext): Promise<Static<typeof Limits>> {
    const repository = new LimitsRepository(this.#db);
    const max = await repository.maxConcurrentCalls(ctx.orgId);
    if (max === undefined) throw Errors.notFound('Organization');
    return { max_concurrent_calls: max, active_calls: await repository.countActiveCalls(ctx.orgId), rate_limit_per_minute: this.#rateLimitPerMinute };
  }

  /**
   * Whether the organization may have one more active call: locks its row (held until `tx` ends),
   * then counts. The caller inserts the call in the same transaction, so the next creation counts it.
   */
  async admitCall(tx: Executor, orgId: string): Promise<{ admitted: boolean; limit: number }> {
    const repository = new LimitsRepository(tx);
    const limit = await repository.lockMaxConcurrentCalls(orgId);
    if (limit === undefined) throw Errors.notFound('Organization');
    return { admitted: (await repository.countActiveCalls(orgId)) < limit, limit };
  }

  /**
   * How many more calls the organization may have active now (the campaign dialer's bound): the
   * same row lock as `admitCall`, held until `tx` ends, so two campaigns of one organization decide
   * one after the other and never both take the last free place.
   */
  async available(tx: Executor, orgId: string): Promise<number> {
    const repository = new LimitsRepository(tx);
    const limit = await repository.lockMaxConcurrentCalls(orgId);
    if (limit === undefined) return 0;
    return Math.max(0, limit - (await repository.countActiveCalls(orgId)));
  }

  /** `admitCall`, refusing with 429 `concurrency_limit` and Retry-After. */
  async requireCallSlot(tx: Executor, orgId: string): Promise<void> {
    const { admitted, limit } = await this.admitCall(tx, orgId);
    if (!admitted) throw Errors.concurrencyLimit(limit, CONCURRENCY_RETRY_AFTER_SECONDS);
  }

  /** The operator's setting (`switchboard org:limits`). */
  async setMaxConcurrentCalls(orgId: string, max: number): Promise<{ organization_id: string; max_concurrent_calls: number }> {
    if (!Number.isInteger(max) || max < 0 || max > MAX_CONCURRENT_CALLS_CEILING) {
      throw Errors.validation(`max_concurrent_calls must be an integer from 0 to ${MAX_CONCURRENT_CALLS_CEILING}`);
    }
    if (!(await new LimitsRepository(this.#db).setMaxConcurrentCalls(orgId, max))) throw Errors.notFound('Organization');
    return { organization_id: orgId, max_concurrent_calls: max };
  }
}
