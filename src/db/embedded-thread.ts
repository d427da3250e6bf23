import { parentPort, workerData } from 'node:worker_threads';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { openPGlite } from './pglite-engine.ts';
import { fixSocketQueue } from './socket-queue.ts';

/**
 * The embedded PostgreSQL engine, in a thread of its own (started by embedded.ts). PGlite is one
 * single-threaded WebAssembly session: sharing the server's thread, every query's CPU stole from
 * HTTP handling. In its own thread it runs on the other core, as a PostgreSQL server would.
 */
export interface EmbeddedThreadOptions {
  pgData: string | undefined;
  socketFile: string;
}

const EMBEDDED_MAX_CONNECTIONS = 500;

const options = workerData as EmbeddedThreadOptions;
const port = parentPort!;

try {
  const db = await openPGlite(options.pgData);
  // Node's net.Server closes a connection over `maxConnections` silently, before pglite-socket sees
  // it: the client's first write fails with EPIPE. A pool's idle connections closing while new ones
  // open, the job queue's own pool and a second process on the socket (the CLI, a test's child
  // server) went over a limit sized to the pool, and queries failed at random. Every connection is a
  // socket into the one shared session, so the limit only guards against a runaway client.
  const server = new PGLiteSocketServer({ db, path: options.socketFile, maxConnections: EMBEDDED_MAX_CONNECTIONS });
  fixSocketQueue(server);
  await server.start();
  port.on('message', (message: { type: string }) => {
    if (message.type !== 'stop') return;
    void (async () => {
      try {
        await server.stop();
        await db.close();
        port.postMessage({ type: 'stopped' });
      } catch (err) {
        port.postMessage({ type: 'stopped', error: String((err as Error)?.stack ?? err) });
      }
    })();
  });
  port.postMessage({ type: 'ready' });
} catch (err) {
  port.postMessage({ type: 'failed', error: String((err as Error)?.stack ?? err) });
}
