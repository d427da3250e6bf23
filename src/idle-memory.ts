import type { Server } from 'node:http';
import v8 from 'node:v8';
import vm from 'node:vm';

/**
 * Gives the memory a burst of work left behind back to the system once the process is quiet.
 *
 * V8 keeps what its heap grew to. Its young generation grows to 2 × 64 MB on a 64-bit machine with
 * memory to spare (start-up alone fills it), and the pages its collections free stay resident in its
 * page pool for reuse: the idle server measured 290 MB, and after five minutes of list load 350-460 MB
 * that two minutes of idleness did not return (bench/memory.ts). A smaller young generation
 * (`--max-semi-space-size=8`) costs the list 40 % more CPU per request; instead, one memory-reducing
 * collection (the one V8 runs under memory pressure: it shrinks the young generation, compacts and
 * returns the pooled pages) runs once the process is quiet and has grown since the last one. It takes
 * about 100 ms of one core, only when nothing is being served.
 */
export interface IdleMemoryOptions {
  /** True when nothing was served since the previous call (the check runs every `intervalMs`). */
  isQuiet: () => boolean;
  intervalMs?: number;
  /** Growth of the resident size since the last release that makes another worth its pause. */
  growthBytes?: number;
  /** Called after each release with the resident size before and after (bytes). */
  onRelease?: (before: number, after: number) => void;
}

const DEFAULT_INTERVAL_MS = 15_000;
const DEFAULT_GROWTH_BYTES = 32 * 1024 * 1024;

type Collect = (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

/**
 * V8's `gc` function, without exposing it to the application: when the process was not started with
 * `--expose-gc`, the flag is set just long enough to create one context that has it.
 */
function gcFunction(): Collect {
  const exposed = (globalThis as { gc?: Collect }).gc;
  if (typeof exposed === 'function') return exposed;
  v8.setFlagsFromString('--expose-gc');
  try {
    return vm.runInNewContext('gc') as Collect;
  } finally {
    v8.setFlagsFromString('--no-expose-gc');
  }
}

export function releaseMemoryWhenIdle(options: IdleMemoryOptions): { stop(): void } {
  const collect = gcFunction();
  const growth = options.growthBytes ?? DEFAULT_GROWTH_BYTES;
  let floor = 0; // resident size right after the last release; 0 until the first (start-up's garbage)
  const timer = setInterval(() => {
    if (!options.isQuiet()) return;
    const before = process.memoryUsage.rss();
    if (before < floor + growth) return;
    collect({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    floor = process.memoryUsage.rss();
    options.onRelease?.(before, floor);
  }, options.intervalMs ?? DEFAULT_INTERVAL_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

/**
 * `isQuiet` for an HTTP server: no request or upgrade arrived since the previous call, and `busy`
 * (the voice runtime's calls in progress, whose audio a pause would interrupt) says nothing runs.
 */
export function quietWhenNothingServed(server: Server, busy: () => boolean): () => boolean {
  let arrived = 0;
  let seen = 0;
  server.on('request', () => { arrived++; });
  server.on('upgrade', () => { arrived++; });
  return () => {
    const quiet = arrived === seen && !busy();
    seen = arrived;
    return quiet;
  };
}
