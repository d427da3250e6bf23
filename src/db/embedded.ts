import fs from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { vector } from '@electric-sql/pglite-pgvector';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { acquireLock, lockHolder } from './lock.ts';
import { fixSocketQueue } from './socket-queue.ts';

/** The embedded PostgreSQL (PGlite) served on a Unix socket so every client uses the `pg` driver. */
export interface EmbeddedServer {
  /** Directory holding `.s.PGSQL.5432`: what `pg` takes as `host`. */
  socketDir: string;
  close(): Promise<void>;
}

export function embeddedPaths(dataDir: string) {
  return {
    pgData: path.join(dataDir, 'pg'),
    socketDir: path.join(dataDir, 'run'),
    socketFile: path.join(dataDir, 'run', '.s.PGSQL.5432'),
    lock: path.join(dataDir, 'switchboard.lock'),
  };
}

// Unix socket paths are limited to about 107 bytes.
const MAX_SOCKET_PATH = 100;

/**
 * Opens the data directory as its only owner and serves it.
 * `dataDir` undefined gives an in-memory database (tests), served from `socketDir`.
 */
export async function startEmbedded(options: {
  dataDir?: string;
  socketDir?: string;
  maxConnections: number;
  /** Let the process exit while the socket still listens (tests). */
  unref?: boolean;
}): Promise<EmbeddedServer> {
  let release = () => {};
  let pgData: string | undefined;
  let socketDir: string;
  if (options.dataDir) {
    const paths = embeddedPaths(options.dataDir);
    fs.mkdirSync(paths.socketDir, { recursive: true, mode: 0o700 });
    release = acquireLock(paths.lock, options.dataDir);
    pgData = paths.pgData;
    socketDir = paths.socketDir;
  } else if (options.socketDir) {
    socketDir = options.socketDir;
  } else {
    throw new Error('startEmbedded needs a dataDir or a socketDir');
  }
  const socketFile = path.join(socketDir, '.s.PGSQL.5432');
  if (socketFile.length > MAX_SOCKET_PATH) {
    release();
    throw new Error(`The socket path ${socketFile} is too long for a Unix socket; choose a shorter DATA_DIR`);
  }
  try {
    fs.rmSync(socketFile, { force: true }); // left by a process that died; we hold the lock now
    const db = await PGlite.create({ dataDir: pgData, extensions: { vector, pg_trgm } });
    const server = new PGLiteSocketServer({ db, path: socketFile, maxConnections: options.maxConnections });
    fixSocketQueue(server);
    await server.start();
    // The listener is private to pglite-socket; unref it when asked so it alone never keeps a process alive.
    if (options.unref) (server as unknown as { server?: { unref(): void } }).server?.unref();
    return {
      socketDir,
      async close() {
        try {
          await server.stop();
          await db.close();
        } finally {
          release();
        }
      },
    };
  } catch (err) {
    release();
    throw err;
  }
}

/** The socket directory of a live server owning `dataDir`, or null when nobody owns it. */
export function runningEmbeddedSocket(dataDir: string): string | null {
  const paths = embeddedPaths(dataDir);
  return lockHolder(paths.lock) !== null && fs.existsSync(paths.socketFile) ? paths.socketDir : null;
}
