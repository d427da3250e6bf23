import { fork, type ChildProcess } from 'node:child_process';
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

/** Starts `bench/serve.ts` in its own process so the load generator does not share its event loop. */
export async function startChild(mode: 'app' | 'bare', env: Record<string, string>): Promise<ChildServer> {
  const child = fork(path.join(BENCH_DIR, 'serve.ts'), [mode], { env: { ...process.env, ...env }, stdio: 'inherit' });
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
}

export async function load(title: string, url: string, headers: Record<string, string>, options: { connections?: number; duration?: number } = {}): Promise<LoadResult> {
  const result = await autocannon({ url, headers, connections: options.connections ?? 20, duration: options.duration ?? 8 });
  return {
    title,
    requests_per_second: Math.round(result.requests.average),
    latency_ms: { p50: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99, mean: result.latency.average },
    non_2xx: result.non2xx,
    errors: result.errors,
  };
}

export function writeResult(name: string, data: unknown): string {
  const dir = path.join(BENCH_DIR, 'results');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.json`);
  fs.writeFileSync(file, `${JSON.stringify(data, null, 2)}\n`);
  return file;
}

export function machine() {
  return { node: process.version, cpus: (globalThis as any).navigator?.hardwareConcurrency ?? null, date: new Date().toISOString() };
}
