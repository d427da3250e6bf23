import { AsyncLocalStorage } from 'node:async_hooks';
import type { PendingWrites } from './pending-write.ts';

/**
 * Added to a transaction's unit of work once the work's outcome is known, so it is written with the
 * change's other pending writes just before the COMMIT: what must commit with the change or not at
 * all (an idempotency key's kept response). `outcome` is undefined when the commit could not wait for
 * it. Throwing, here or in a deferred write's check, rolls the transaction back.
 */
export type CommitSeal<T> = (unit: PendingWrites, outcome: T | undefined) => void;

interface Slot<T> {
  release: (outcome: T | undefined) => void;
  committed: Promise<void>;
  timer: NodeJS.Timeout;
}

/**
 * Holds the COMMIT of a unit of work's transaction (a request's) until the unit's outcome is known,
 * so the seal writes the outcome in the change's own transaction: a crash before that COMMIT leaves
 * neither, a crash after it leaves both. The transaction's result is handed to its caller at once;
 * only its COMMIT waits, for the unit to `settle` with its outcome.
 *
 * It waits for nothing else: whatever the unit does on the database meanwhile (a query or another
 * transaction, which on the embedded database could not run while one is open) first commits the
 * held one without its outcome, and so does a hold longer than `maxHoldMs` (a network call after
 * the transaction must not hold it open). Then the outcome is kept after the fact, as it was before.
 */
export class CommitHolder<T> {
  readonly #seal: CommitSeal<T>;
  readonly #maxHoldMs: number;
  readonly #flushFirst: boolean;
  #slot: Slot<T> | undefined;
  /** The COMMIT of the last transaction held, which may still be under way after its slot was let go. */
  #lastCommitted: Promise<void> | undefined;
  #failure: unknown;

  /**
   * `flushFirst`: the transaction's pending writes go before the hold, only the seal after it. For a
   * unit that acts outside the database once its transaction hands out its result (a file deleted, a
   * delivery attempted): a pending write that fails then fails the work itself, before those acts.
   * Otherwise they are written with the seal, in one statement.
   */
  constructor(seal: CommitSeal<T>, maxHoldMs: number, options: { flushFirst?: boolean } = {}) {
    this.#seal = seal;
    this.#maxHoldMs = maxHoldMs;
    this.#flushFirst = options.flushFirst ?? false;
  }

  get holding(): boolean {
    return this.#slot !== undefined;
  }

  /** The error of a held transaction that could not commit (the change is not there), if any. */
  get failure(): unknown {
    return this.#failure;
  }

  /**
   * Commits the held transaction (if any) with `outcome` sealed in it. True when a transaction
   * committed with this outcome; false when none was held. Rejects when one failed to commit.
   */
  async settle(outcome?: T): Promise<boolean> {
    const slot = this.#slot;
    this.#slot = undefined;
    if (!slot) {
      // Let go already (its hold ran out, or the unit used the database otherwise): its COMMIT may
      // still be under way, and whether it failed is known only once it is done.
      await this.#lastCommitted;
      if (this.#failure) throw this.#failure;
      return false;
    }
    clearTimeout(slot.timer);
    slot.release(outcome);
    await slot.committed;
    if (this.#failure) throw this.#failure;
    return outcome !== undefined;
  }

  /**
   * Runs `open`'s transaction with the COMMIT held (see the class): `work`, then, once the outcome is
   * known, the seal and the transaction's pending writes (`unit`, read once the transaction is open).
   */
  run<R>(open: (body: () => Promise<R>) => Promise<R>, work: () => Promise<R>, unit: () => PendingWrites): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      let handedOut = false;
      let reportCommit!: (err?: unknown) => void;
      const committed = new Promise<void>((done) => (reportCommit = (err) => {
        if (err !== undefined) this.#failure ??= err;
        done();
      }));
      open(async () => {
        const result = await work();
        if (this.#flushFirst) await unit().flush();
        if (this.#slot) this.settle().catch(() => {}); // the outcome belongs to the last transaction
        const outcome = await new Promise<T | undefined>((release) => {
          const timer = setTimeout(() => void this.settle().catch(() => {}), this.#maxHoldMs);
          this.#slot = { release, committed, timer };
          this.#lastCommitted = committed;
          handedOut = true;
          resolve(result);
        });
        this.#seal(unit(), outcome);
        await unit().flush();
        return result;
      }).then(() => reportCommit(), (err: unknown) => {
        if (handedOut) reportCommit(err);
        else reject(err);
      });
    });
  }
}

const scope = new AsyncLocalStorage<CommitHolder<unknown>>();

/** Runs `work` (and everything it starts) with its transactions' commits held by `holder`. */
export function runHoldingCommits<R>(holder: CommitHolder<unknown>, work: () => R): R {
  return scope.run(holder, work);
}

export function currentHolder(): CommitHolder<unknown> | undefined {
  return scope.getStore();
}

/** Before the current unit uses the database otherwise: commits what it holds (its outcome kept later). */
export async function releaseHeldCommit(): Promise<void> {
  const holder = scope.getStore();
  if (holder?.holding) await holder.settle().catch(() => {});
}
