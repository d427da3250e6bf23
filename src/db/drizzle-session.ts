import type pg from 'pg';

/**
 * The one place that reads Drizzle's private state: the node-postgres client under a Drizzle handle
 * (`session.client`), the pool for the database itself and the pool client running the transaction
 * for an open one. Hot statements go straight to that client (prepared statements without a query
 * builder), and the job queue writes its job on it, inside the change's transaction. Drizzle does not
 * publish this, so test/drizzle-session.test.ts pins it: an upgrade that moves it fails there, not in
 * a request.
 */
export function driverClientOf(handle: object): pg.Pool | pg.PoolClient | undefined {
  return (handle as { session?: { client?: pg.Pool | pg.PoolClient } }).session?.client;
}
