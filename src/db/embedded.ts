import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { acquireLock, lockHolder } from './lock.ts';
import type { EmbeddedThreadOptions } from './embedded-thread.ts';

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
    if (pgData && !fs.existsSync(path.join(pgData, 'PG_VERSION'))) await initializeInChildProcess(pgData);
    const thread = await startEngineThread({ pgData, socketFile });
    // When asked, the engine's thread alone never keeps the process alive (tests).
    if (options.unref) thread.unref();
    let closed: Promise<void> | undefined;
    return {
      socketDir,
      close() {
        closed ??= stopEngineThread(thread).finally(release);
        return closed;
      },
    };
  } catch (err) {
    release();
    throw err;
  }
}

/**
 * Runs initdb for a new data directory in a short-lived process (embedded-init.ts), so what it
 * allocates goes back to the system when that process exits instead of staying in the server's.
 */
async function initializeInChildProcess(pgData: string): Promise<void> {
  const script = fileURLToPath(new URL('./embedded-init.ts', import.meta.url));
  // initdb is short: V8's optimizing WebAssembly compiler would take about 500 MB to compile
  // PGlite's SQL parser for it, so the child stays on the baseline compiler (its peak 1,148 → 593 MB, docs/benchmarks.md).
  const v8Flags = ['--no-wasm-dynamic-tiering', '--no-wasm-tier-up'];
  const child = spawn(process.execPath, [...v8Flags, script, pgData], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => { stderr = (stderr + chunk.toString()).slice(-4000); });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', resolve);
  });
  if (code !== 0) throw new Error(`The embedded database could not be initialized in ${pgData} (exit ${code}): ${stderr.trim()}`);
}

type EngineMessage = { type: 'ready' | 'failed' | 'stopped'; error?: string };

/** Starts the engine thread (embedded-thread.ts) and waits until its socket listens. */
async function startEngineThread(options: EmbeddedThreadOptions): Promise<Worker> {
  const thread = new Worker(new URL('./embedded-thread.ts', import.meta.url), { workerData: options });
  await new Promise<void>((resolve, reject) => {
    const onExit = (code: number) => reject(new Error(`The embedded database thread exited with ${code} before it was ready`));
    thread.once('error', reject);
    thread.once('exit', onExit);
    thread.once('message', (message: EngineMessage) => {
      thread.off('error', reject);
      thread.off('exit', onExit);
      if (message.type === 'ready') resolve();
      else reject(new Error(`The embedded database did not start: ${message.error}`));
    });
  });
  return thread;
}

/** Stops the socket server and closes the database (flushing it to disk), then ends the thread. */
async function stopEngineThread(thread: Worker): Promise<void> {
  const stopped = new Promise<EngineMessage>((resolve) => {
    thread.once('message', resolve);
    thread.once('exit', () => resolve({ type: 'stopped', error: 'the thread exited before it stopped' }));
  });
  thread.postMessage({ type: 'stop' });
  const result = await stopped;
  await thread.terminate();
  if (result.error) throw new Error(`The embedded database did not close cleanly: ${result.error}`);
}

/** The socket directory of a live server owning `dataDir`, or null when nobody owns it. */
export function runningEmbeddedSocket(dataDir: string): string | null {
  const paths = embeddedPaths(dataDir);
  return lockHolder(paths.lock) !== null && fs.existsSync(paths.socketFile) ? paths.socketDir : null;
}
