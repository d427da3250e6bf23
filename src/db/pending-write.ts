import type pg from 'pg';

/**
 * A write that belongs to a change but need not run where it is asked for, only before its COMMIT:
 * an event and its deliveries, an audit entry, an agent version, an idempotency key's kept response
 * (unit-of-work.ts). One INSERT, UPDATE or DELETE with `$1`... placeholders and no `$` digit
 * elsewhere, and no WITH of its own (PostgreSQL allows data-modifying WITH clauses only at the top of
 * a statement).
 */
export interface PendingWrite {
  /** A prepared statement's name when sent alone (the embedded database drops it). */
  name?: string;
  text: string;
  values: unknown[];
  /**
   * Told how many rows the write returned (its text then has a RETURNING clause); throwing rolls the
   * change back (an idempotency key another request took meanwhile).
   */
  check?: (rows: number) => void;
}

/** What holds a transaction's pending writes until its COMMIT. */
export interface PendingWrites {
  defer(write: PendingWrite): void;
  /** Sends what is pending, once, on the transaction's connection. */
  flush(): Promise<void>;
}

/** Sends a statement (prepared under `name` where the connection allows) on a transaction's connection. */
export type Send = (name: string | undefined, text: string, values: unknown[]) => Promise<pg.QueryResultRow[]>;
