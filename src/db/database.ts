import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import * as schema from './schema/index.ts';
import { runningEmbeddedSocket, startEmbedded, type EmbeddedServer } from './embedded.ts';
import { currentHolder, releaseHeldCommit } from './held-commit.ts';
import { driverClientOf } from './drizzle-session.ts';

export type Db = NodePgDatabase<typeof schema>;
/** An open transaction as Drizzle hands it out (unit-of-work.ts opens them, with their pending writes). */
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];
/** Anything a repository can run queries on: the database or an open transaction. */
export type Executor = Db | Tx;

export interface Database {
  pool: pg.Pool;
  db: Db;
  kind: 'embedded' | 'server';
  /** How to open further connections (the job queue opens its own pool). */
  connection: pg.PoolConfig;
  /**
   * A hot read as a named prepared statement (parsed and planned once per connection). The embedded
   * database runs every socket connection in one session, where names would collide, so there it
   * is an ordinary query.
   */
  prepared<R extends pg.QueryResultRow>(name: string, text: string, values: unknown[], types?: pg.CustomTypesConfig): Promise<R[]>;
  /**
   * A read whose best plan depends on its values (a LIMIT over one organization's rows, a period's
   * range), as an unnamed statement: parsed and planned for these values on every execution. A named
   * statement may switch to a generic plan after five runs, which cannot see how many rows the
   * organization has and may sort all of them.
   */
  planned<R extends pg.QueryResultRow>(text: string, values: unknown[], types?: pg.CustomTypesConfig): Promise<R[]>;
  close(): Promise<void>;
}

// Counts and sums come back as int8/numeric strings; the values we store fit a JS number.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

const MIGRATIONS = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'migrations');

/**
 * While a unit of work holds a COMMIT, anything else it sends through the pool first lets that
 * COMMIT go (held-commit.ts): on the embedded database the pool's other connections wait for an
 * open transaction, so the unit would wait for itself.
 */
function releasingHeldCommits(pool: pg.Pool): void {
  const connect = pool.connect.bind(pool) as (...args: unknown[]) => unknown;
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  const holds = (args: unknown[]) => typeof args[args.length - 1] !== 'function' && currentHolder()?.holding === true;
  pool.connect = ((...args: unknown[]) => (holds(args) ? releaseHeldCommit().then(() => connect(...args)) : connect(...args))) as pg.Pool['connect'];
  pool.query = ((...args: unknown[]) => (holds(args) ? releaseHeldCommit().then(() => query(...args)) : query(...args))) as pg.Pool['query'];
}

/**
 * Clients of the embedded database: every socket connection is one shared session there, where the
 * names of prepared statements would collide, so statements on them go unnamed.
 */
const sharedSession = new WeakSet<object>();

function wrap(pool: pg.Pool, kind: Database['kind'], onClose: () => Promise<void>, oneSession = kind === 'embedded'): Database {
  if (oneSession) {
    sharedSession.add(pool);
    pool.on('connect', (client) => sharedSession.add(client));
  }
  pool.on('error', () => {}); // an idle client's error (server restart) must not crash the process
  // Nor a checked-out one's: the pool takes its listener off a client it lends, so a server restart
  // (FATAL 57P01) arriving between two queries of a transaction was an unhandled 'error' event that
  // killed the process. The query in flight still fails; the pool drops the broken client on release.
  pool.on('connect', (client) => client.on('error', () => {}));
  const { connectionString, host, user, database } = pool.options;
  releasingHeldCommits(pool);
  const db = drizzle({ client: pool, schema });
  return {
    pool,
    db,
    kind,
    connection: connectionString ? { connectionString } : { host, user, database },
    prepared: (name, text, values, types) => preparedOn(db, name, text, values, types),
    planned: (text, values, types) => preparedOn(db, undefined, text, values, types),
    async close() {
      await pool.end();
      await onClose();
    },
  };
}

export interface OpenOptions {
  databaseUrl: string | undefined;
  dataDir: string;
  poolSize: number;
  /**
   * For commands that may run beside the server: when a live server owns the data directory,
   * connect through its socket instead of opening the directory.
   */
  shareRunningServer?: boolean;
  /** How long an idle pooled connection stays open (pg's default: 10 s). */
  idleTimeoutMs?: number;
}

export async function openDatabase(options: OpenOptions): Promise<Database> {
  if (options.databaseUrl) {
    const pool = new pg.Pool({
      connectionString: options.databaseUrl, max: options.poolSize, idleTimeoutMillis: options.idleTimeoutMs,
      // PostgreSQL's own plan cache (plan_cache_mode=auto): a named statement whose plan does not depend
      // on its values (a key lookup, an insert, a unit of work's writes) keeps a generic plan and is
      // not planned again on every run. The reads whose plan does depend on them go through `planned`.
    });
    return wrap(pool, 'server', async () => {}, await servesOneSession(pool));
  }
  if (options.shareRunningServer) {
    const socketDir = runningEmbeddedSocket(options.dataDir);
    if (socketDir) return wrap(socketPool(socketDir, Math.min(options.poolSize, 2)), 'embedded', async () => {});
  }
  const server = await startEmbedded({ dataDir: options.dataDir });
  return wrap(socketPool(server.socketDir, options.poolSize), 'embedded', () => server.close());
}

/**
 * An in-memory embedded database (tests): the same socket, the same driver, nothing on disk.
 * Its listener does not hold the process open, so a test run ends once its connections go idle.
 */
export async function openMemoryDatabase(socketDir: string, poolSize: number, idleTimeoutMs?: number): Promise<Database> {
  const server: EmbeddedServer = await startEmbedded({ socketDir, unref: true });
  return wrap(socketPool(server.socketDir, poolSize, idleTimeoutMs), 'embedded', () => server.close());
}

/**
 * Whether a server URL leads to an embedded database's socket (another process's, such as a worker
 * pointed at `switchboard start`'s): there every connection is one session, where the names of
 * prepared statements would collide. Unknown (the server is not up yet): a server of its own.
 */
async function servesOneSession(pool: pg.Pool): Promise<boolean> {
  let client: pg.PoolClient | undefined;
  try {
    client = await pool.connect();
    const { rows } = await client.query<{ version: string }>('SELECT version()');
    return /PGlite/.test(rows[0]?.version ?? '');
  } catch {
    return false;
  } finally {
    // Destroyed, not returned: the pool's clients get their handlers (wrap) when they connect, which
    // this one did before they were there.
    client?.release(true);
  }
}

function socketPool(socketDir: string, max: number, idleTimeoutMillis?: number): pg.Pool {
  return new pg.Pool({ host: socketDir, user: 'postgres', database: 'postgres', max, idleTimeoutMillis });
}

/** Applies pending migrations; an advisory lock keeps concurrent starters from racing. */
export async function runMigrations(database: Database): Promise<void> {
  const client = await database.pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock(7314001)');
    try {
      await migrate(drizzle({ client }), { migrationsFolder: MIGRATIONS });
    } finally {
      await client.query('SELECT pg_advisory_unlock(7314001)');
    }
  } finally {
    client.release();
  }
}

/**
 * A hot statement as a named prepared statement on whatever the executor runs on (an open
 * transaction's client or the pool): no query builder on the path, and the parse is done once per
 * connection. `Database.prepared` is this on the pool.
 */
export async function preparedOn<R extends pg.QueryResultRow>(executor: Executor, name: string | undefined, text: string, values: unknown[], types?: pg.CustomTypesConfig): Promise<R[]> {
  const client = driverClientOf(executor)!;
  const { rows } = await client.query<R>({ name: sharedSession.has(client) ? undefined : name, text, values, types });
  return rows;
}

/**
 * The client of an open Drizzle transaction, for libraries that write in it (the job queue). A
 * transaction of the node-postgres driver runs on one pool client, its session's; the pool itself
 * (no transaction) is refused, so nothing meant to commit with a change can escape it.
 */
export function clientOf(tx: Executor): pg.PoolClient {
  const client = driverClientOf(tx);
  if (!client || client instanceof pg.Pool || typeof (client as pg.PoolClient).release !== 'function') {
    throw new Error('clientOf needs an open transaction, not the pool');
  }
  return client as pg.PoolClient;
}
