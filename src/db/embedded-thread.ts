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
  maxConnections: number;
}

const options = workerData as EmbeddedThreadOptions;
const port = parentPort!;

try {
  const db = await openPGlite(options.pgData);
  const server = new PGLiteSocketServer({ db, path: options.socketFile, maxConnections: options.maxConnections });
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
