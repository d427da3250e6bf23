import { sql, type SQL } from 'drizzle-orm';

/**
 * Writes that need not run where they are asked for, only in the same transaction: the audit entry
 * of a change. A transaction opened by the application's wrappers (database.ts) holds them until
 * either a statement the change sends anyway carries them (the event outbox's, as extra
 * data-modifying WITH clauses, which PostgreSQL always runs to completion) or, at the latest, its
 * COMMIT, before which they are sent. Either way they commit or roll back with the change; what
 * they save is a round trip and a statement per change.
 *
 * Only the outermost transaction holds them: a savepoint (a nested transaction) that rolls back must
 * take its writes with it, so there, as on the pool, a write goes at once.
 */
export interface DeferredWrite {
  /** A prepared statement's name when sent alone (the embedded database drops it). */
  name: string | undefined;
  /** One INSERT, UPDATE or DELETE with `$1`... placeholders (and no `$` digit elsewhere), nothing returned. */
  text: string;
  values: unknown[];
}

const held = new WeakMap<object, DeferredWrite[]>();

/** Marks a transaction (its Drizzle handle) as one whose writes may be deferred. */
export function holdWrites(tx: object): void {
  held.set(tx, []);
}

/** Defers `write` to the transaction's next carrier or its commit; false when `tx` cannot hold it (send it now). */
export function deferWrite(tx: object, write: DeferredWrite): boolean {
  const writes = held.get(tx);
  if (!writes) return false;
  writes.push(write);
  return true;
}

/** Takes the writes a transaction holds, for a statement to carry them. */
function takeWrites(tx: object): DeferredWrite[] {
  const writes = held.get(tx);
  if (!writes?.length) return [];
  held.set(tx, []);
  return writes;
}

/** Sends what is still held, just before COMMIT. */
export async function flushWrites(tx: object, send: (write: DeferredWrite) => Promise<unknown>): Promise<void> {
  for (const write of takeWrites(tx)) await send(write);
}

/**
 * The held writes as WITH clauses to append to a statement's own (`, carried_0 AS (...)`), their
 * placeholders bound as Drizzle parameters; empty when nothing is held.
 */
export function carriedWrites(tx: object): SQL {
  const clauses = takeWrites(tx).map((write, i) => sql`, ${sql.raw(`carried_${i}`)} AS (${withParams(write)})`);
  return sql.join(clauses);
}

/** A `$n` statement as a Drizzle fragment: text between placeholders raw, each placeholder its value. */
function withParams(write: DeferredWrite): SQL {
  const parts = write.text.split(/\$(\d+)/);
  return sql.join(parts.map((part, i) => (i % 2 === 0 ? sql.raw(part) : sql.param(write.values[Number(part) - 1]))));
}
