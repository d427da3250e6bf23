import { fork, type ChildProcess, type StdioOptions } from 'node:child_process';
import http from 'node:http';
import os from 'node:os';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import autocannon from 'autocannon';

/** Shared harness: a PostgreSQL bench database, servers in child processes, autocannon, result files. */

export const BENCH_DIR = import.meta.dirname;

export async function benchDatabaseUrl(name = 'switchboard_bench'): Promise<string> {
  if (process.env.DATABASE_URL) return process.env.DATABASE_URL;
  const admin = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
  await admin.connect();
  const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
  if (!rowCount) await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  return `postgres://postgres@127.0.0.1:5432/${name}`;
}

export interface ChildServer {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Starts `bench/serve.ts` in its own process so the load generator does not share its event loop.
 * `discardOutput`: its standard output goes to /dev/null (a server that logs every request: the
 * lines are still formatted and written, as to any log file, but not onto the bench's terminal).
 */
export async function startChild(mode: 'app' | 'bare', env: Record<string, string>, options: { discardOutput?: boolean } = {}): Promise<ChildServer> {
  // No rate limit: one key at thousands of requests a second is the point of a benchmark.
  const limits = { RATE_LIMIT_PER_MINUTE: '100000000', RATE_LIMIT_PUBLIC_PER_MINUTE: '100000000' };
  const stdio: StdioOptions = options.discardOutput ? ['inherit', 'ignore', 'inherit', 'ipc'] : 'inherit';
  const child = fork(path.join(BENCH_DIR, 'serve.ts'), [mode], { env: { ...process.env, ...limits, ...env }, stdio });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('message', (m: any) => (m?.url ? resolve(m.url) : reject(new Error(String(m?.error)))));
    child.once('exit', (code) => reject(new Error(`bench server exited with ${code}`)));
  });
  return {
    url,
    child,
    stop: () => new Promise((resolve) => { child.once('exit', () => resolve()); child.kill('SIGTERM'); }),
  };
}

export interface LoadResult {
  title: string;
  requests_per_second: number;
  latency_ms: { p50: number; p90: number; p99: number; mean: number };
  non_2xx: number;
  errors: number;
  requests: number;
}

/**
 * autocannon at `url` for `duration` seconds. With `latencies`, every response's latency (ms) is
 * pushed to it, so percentiles can be taken over several rounds rather than per round.
 */
export async function load(title: string, url: string, headers: Record<string, string>, options: { connections?: number; duration?: number; latencies?: number[] } = {}): Promise<LoadResult> {
  const latencies = options.latencies;
  const result = await autocannon({
    url, headers, connections: options.connections ?? 20, duration: options.duration ?? 8,
    ...(latencies ? { setupClient: (client: any) => client.on('response', (_status: number, _bytes: number, ms: number) => latencies.push(ms)) } : {}),
  });
  return {
    title,
    requests_per_second: Math.round(result.requests.average),
    latency_ms: { p50: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99, mean: result.latency.average },
    non_2xx: result.non2xx,
    errors: result.errors,
    requests: result.requests.total,
  };
}

const TICK_MS = 10; // Linux's USER_HZ is 100 on every platform we run on

/** CPU time (user + system, ms) a process has used so far, from /proc; 0 once it is gone. */
function processCpuMs(pid: number | string): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return 0;
  }
}

/** The process ids of the PostgreSQL backends serving `database`, found by their process title. */
export function databaseBackendPids(database: string): string[] {
  const pids: string[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let title: string;
    try {
      title = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    if (title.startsWith('postgres: ') && title.split(' ').includes(database)) pids.push(entry);
  }
  return pids;
}

/** CPU time (ms) used so far by each of the given processes and of the PostgreSQL backends serving `database`. */
export function cpuSnapshot(pids: number[], database: string): Map<string, number> {
  const snapshot = new Map(pids.map((pid) => [String(pid), processCpuMs(pid)]));
  for (const backend of databaseBackendPids(database)) snapshot.set(backend, processCpuMs(backend));
  return snapshot;
}

/**
 * CPU time (ms) those processes used since `before`, a process started meanwhile counted whole (one
 * that ended meanwhile is lost: an idle backend closing, which used next to nothing). Per request,
 * it is what the request costs the machine whatever else runs on it, where requests per second also
 * move with the load of other work.
 */
export function cpuSince(before: Map<string, number>, pids: number[], database: string): number {
  const { processes, database: backends } = cpuSinceByPart(before, pids, database);
  return processes + backends;
}

/** cpuSince split: the given processes' part and the PostgreSQL backends' part (ms). */
export function cpuSinceByPart(before: Map<string, number>, pids: number[], database: string): { processes: number; database: number } {
  const own = new Set(pids.map(String));
  const used = { processes: 0, database: 0 };
  for (const [pid, ms] of cpuSnapshot(pids, database)) used[own.has(pid) ? 'processes' : 'database'] += ms - (before.get(pid) ?? 0);
  return used;
}

/**
 * Asks a forked child over IPC: sends `message` (none: only waits) and resolves with the child's
 * first message of type `reply` from then on.
 */
export function askChild<T>(child: ChildProcess, message: object | null, reply: string): Promise<T> {
  return new Promise<T>((resolve) => {
    const listener = (m: { type: string }) => {
      if (m.type !== reply) return;
      child.off('message', listener);
      resolve(m as T);
    };
    child.on('message', listener);
    if (message) child.send(message);
  });
}

/** The project's root, where `npm start` runs. */
export const PROJECT_ROOT = path.resolve(BENCH_DIR, '..');

/** The arguments `npm start` gives node (`exec node <flags> src/server.ts`), read from package.json. */
export function npmStartArguments(): string[] {
  const start = JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')).scripts.start as string;
  return start.replace(/^exec\s+/, '').split(/\s+/).slice(1);
}

/** A field of a process's /proc status in MB (VmRSS, VmHWM). */
export function procStatusMb(pid: number, field: string): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)![1]) / 1024;
}

export function writeResult(name: string, data: unknown): string {
  const dir = path.join(BENCH_DIR, 'results');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.json`);
  fs.writeFileSync(file, `${JSON.stringify(data, null, 2)}\n`);
  return file;
}

/** The machine, and its load when the benchmark starts (1, 5 and 15 minute averages): a busy machine measures slower. */
export function machine() {
  return { node: process.version, cpus: os.cpus().length, date: new Date().toISOString(), load_before: loadAverage() };
}

/** Waits (at most `seconds`) for the machine to settle: a run right after another measures the last one's tail. */
export async function settle(seconds = 90): Promise<number[]> {
  const until = Date.now() + seconds * 1000;
  while (os.loadavg()[0]! > 0.8 && Date.now() < until) await new Promise((r) => setTimeout(r, 2000));
  return loadAverage();
}

export function loadAverage(): number[] {
  return os.loadavg().map((v) => Number(v.toFixed(2)));
}

/** The median (the mean of the middle two for an even count); NaN for none. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  if (!sorted.length) return NaN;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * A 95 % interval for the median of `values` (per-round figures), by the percentile bootstrap: 5,000
 * resamples of the rounds with replacement. The generator is seeded, so the same samples give the
 * same interval. It says how far the rounds' spread lets a median move, not how far the machine can.
 */
export function medianInterval95(values: number[]): [number, number] {
  let state = 1;
  const random = () => (state = (state * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
  const medians = Array.from({ length: 5_000 }, () => median(values.map(() => values[Math.floor(random() * values.length)]!)));
  medians.sort((a, b) => a - b);
  return [medians[124]!, medians[4_874]!];
}

/** Percentiles in microseconds of durations measured in milliseconds. */
export function percentilesUs(durationsMs: number[]) {
  const sorted = [...durationsMs].sort((a, b) => a - b);
  const at = (q: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! * 1000);
  const mean = Math.round((sorted.reduce((s, v) => s + v, 0) / sorted.length) * 1000);
  return { p50_us: at(0.5), p90_us: at(0.9), p99_us: at(0.99), mean_us: mean, samples: sorted.length };
}

/** One request after another on one kept-alive connection: the request's own latency, to the microsecond. */
export async function sequentialLatency(url: string, headers: Record<string, string>, options: { requests?: number; warmup?: number } = {}) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const once = () => new Promise<void>((resolve, reject) => {
    const req = http.get(url, { headers, agent }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`status ${res.statusCode}`))));
    });
    req.on('error', reject);
  });
  for (let i = 0; i < (options.warmup ?? 50); i++) await once();
  const durations: number[] = [];
  for (let i = 0; i < (options.requests ?? 500); i++) {
    const started = performance.now();
    await once();
    durations.push(performance.now() - started);
  }
  agent.destroy();
  return percentilesUs(durations);
}
