import { createHash } from 'node:crypto';
import { drizzle } from 'drizzle-orm/node-postgres';
import type pg from 'pg';
import * as schema from './schema/index.ts';
import { preparedOn, type Database, type Db, type Executor, type Tx } from './database.ts';
import { currentHolder } from './held-commit.ts';
import { inTransactionScope } from './transaction-scope.ts';
import type { PendingWrite, PendingWrites, Send } from './pending-write.ts';

/**
 * The writes of one transaction that wait for its COMMIT. They are sent together, once, just before
 * it, in one statement (each a data-modifying WITH clause, which PostgreSQL runs to completion
 * whether or not the statement reads it), so they commit or roll back with the change and cost it one
 * round trip whatever their number and whatever order they were added in.
 */
export class UnitOfWork implements PendingWrites {
  readonly #send: Send;
  #writes: PendingWrite[] = [];
  constructor(send: Send) {
    this.#send = send;
  }

  defer(write: PendingWrite): void {
    this.#writes.push(write);
  }

  get pending(): number {
    return this.#writes.length;
  }

  /** Sends what is pending on the transaction's connection and runs the writes' checks. */
  async flush(): Promise<void> {
    const send = this.#send;
    const writes = this.#writes;
    this.#writes = [];
    if (!writes.length) return;
    if (writes.length === 1) {
      const [only] = writes as [PendingWrite];
      const rows = await send(only.name, only.text, only.values);
      only.check?.(rows.length);
      return;
    }
    const { name, text, values, checked } = combined(writes);
    const [counts] = await send(name, text, values);
    checked.forEach((write, i) => write.check!(Number(counts![`c${i}`])));
  }
}

/**
 * The combined statements of named writes, by their writes' names (a name always means one text, so
 * the names tell the text): built and hashed once, and prepared once per connection. Bounded, since
 * each prepared statement stays in its connection; past the bound a new combination goes unnamed.
 */
const COMBINATIONS_MAX = 256;
const combinations = new Map<string, { name: string; text: string }>();

/**
 * Several writes as one statement: `WITH w0 AS (...), w1 AS (...) SELECT ...`, each write's
 * placeholders shifted past the ones before it, the rows each checked write returned counted.
 */
function combined(writes: PendingWrite[]): { name: string | undefined; text: string; values: unknown[]; checked: PendingWrite[] } {
  const values = writes.flatMap((write) => write.values);
  const checked = writes.filter((write) => write.check);
  if (!writes.every((write) => write.name)) return { name: undefined, text: combinedText(writes), values, checked };
  const key = writes.map((write) => write.name).join(',');
  let known = combinations.get(key);
  if (!known) {
    const text = combinedText(writes);
    known = { name: `uow_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`, text };
    if (combinations.size >= COMBINATIONS_MAX) return { name: undefined, text, values, checked };
    combinations.set(key, known);
  }
  return { name: known.name, text: known.text, values, checked };
}

function combinedText(writes: PendingWrite[]): string {
  const clauses: string[] = [];
  const counts: string[] = [];
  let offset = 0;
  writes.forEach((write, i) => {
    const shift = offset;
    clauses.push(`w${i} AS (${write.text.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + shift}`)})`);
    offset += write.values.length;
    if (write.check) counts.push(`(SELECT count(*) FROM w${i})::int AS c${counts.length}`);
  });
  return `WITH ${clauses.join(', ')} SELECT ${counts.length ? counts.join(', ') : '1 AS done'}`;
}

/** An open transaction with its unit of work: what it defers is written just before its COMMIT. */
export type WriteTx = Tx & { readonly unit: UnitOfWork };

/** The unit of work of `executor` when it is an open transaction of `transaction`; undefined on the pool or in a savepoint. */
export function unitOf(executor: Executor): UnitOfWork | undefined {
  return (executor as Partial<WriteTx>).unit;
}

/**
 * Defers `write` to the transaction's COMMIT; where there is no unit of work to hold it (the pool, a
 * savepoint, which must take its writes with it when it rolls back) it is sent at once.
 */
export async function deferOrSend(executor: Executor, write: PendingWrite): Promise<void> {
  const unit = unitOf(executor);
  if (unit) return unit.defer(write);
  const rows = await preparedOn(executor, write.name, write.text, write.values);
  write.check?.(rows.length);
}

function withUnit(tx: Tx): WriteTx {
  return Object.assign(tx, { unit: new UnitOfWork((name, text, values) => preparedOn(tx, name, text, values)) });
}

/**
 * A transaction with its unit of work: `work` runs on it, then what it deferred is written, then it
 * commits (or all of it rolls back when anything throws). In a request holding an idempotency key
 * (held-commit.ts), the COMMIT also waits for the request's response, which the key's seal adds to
 * the same unit, so the change, its events, its audit entries and its kept response are one write.
 * Marked as a transaction (transaction-scope.ts), so the job queue can refuse to start in one.
 */
export function transaction<T>(db: Db, work: (tx: WriteTx) => Promise<T>): Promise<T> {
  return inUnitOfWork((body) => db.transaction((raw) => body(withUnit(raw), undefined)), work);
}

/**
 * `transaction` on a client of its own, which it also hands out, for libraries that take one (the
 * job queue writes its job in the same transaction as the row it is about).
 */
export function clientTransaction<T>(database: Database, work: (tx: WriteTx, client: pg.PoolClient) => Promise<T>): Promise<T> {
  return inUnitOfWork((body) => begun(database, body), work);
}

/** Opens a transaction and runs `body` in it, with what `work` is given: the transaction, and a client where there is one. */
type Opener<T, C> = (body: (tx: WriteTx, client: C) => Promise<T>) => Promise<T>;

/** Runs `work` in the transaction `open` opens, its unit flushed before the COMMIT, which a held-commit unit holds for its seal. */
function inUnitOfWork<T, C>(open: Opener<T, C>, work: (tx: WriteTx, client: C) => Promise<T>): Promise<T> {
  return inTransactionScope(() => {
    const holder = currentHolder();
    if (!holder) {
      return open(async (tx, client) => {
        const result = await work(tx, client);
        await tx.unit.flush();
        return result;
      });
    }
    let opened!: { tx: WriteTx; client: C };
    return holder.run((body) => open((tx, client) => {
      opened = { tx, client };
      return body();
    }), () => work(opened.tx, opened.client), () => opened.tx.unit);
  });
}

/** BEGIN, the work, COMMIT (ROLLBACK when it throws) on a client of the pool. */
async function begun<T>(database: Database, work: (tx: WriteTx, client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await database.pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(withUnit(drizzle({ client, schema }) as unknown as Tx), client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}
