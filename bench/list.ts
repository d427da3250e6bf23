/**
 * `GET /api/calls?limit=50` against honest baselines, in one run (results: bench/results/list.json):
 *
 * 1. PostgreSQL, 1,000,000 calls over 100 organizations, 50 connections: the app (real server in a
 *    child process, key lookups cached) against a raw `pg` loop running the app's exact statements,
 *    the credential lookup and then the list, 50 loops on a pool of 10 named statements (target: app
 *    ≥ 0.75 of it, p99 ≤ 1.5× its p99). The same app with AUTH_CACHE=false is measured beside it, and
 *    a loop of the list statement alone, so each step's cost is visible. Five interleaved rounds,
 *    the median reported.
 * 2. The embedded default (PGlite, its own thread) against PostgreSQL on the same 10,000 calls at 10
 *    connections, side by side (target ≥ 0.6).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { hashApiKey } from '../src/core/auth/api-key-secret.ts';
import { ApiKeyCredentials } from '../src/modules/api-keys/credentials.ts';
import { listCallSummaries } from '../src/modules/calls/call-list.ts';
import { load, loadAverage, machine, percentilesUs, settle, startChild, writeResult, type LoadResult } from './lib.ts';
import { benchDatabase, seededCalls } from './seed.ts';

const CONNECTIONS = 50;
const ROUND_SECONDS = 6;
// The machine's two cores are shared (and the VM's with its host): five interleaved rounds, the median reported.
const ROUNDS = 5;

interface Statement { name: string; text: string; values: unknown[] }

/** The statements the app runs for one list request, as it runs them (captured from its own code). */
async function appStatements(orgId: string, apiKey: string): Promise<{ lookup: Statement; list: Statement }> {
  const captured: Statement[] = [];
  const capture = { prepared: async (name: string, text: string, values: unknown[]) => { captured.push({ name, text, values }); return []; }, pool: undefined as never };
  await new ApiKeyCredentials({ database: capture }).findByHash(hashApiKey(apiKey));
  await listCallSummaries(capture, orgId, {}, 51);
  return { lookup: captured[0]!, list: captured[1]! };
}

/** `loops` concurrent loops, each running `statements` one after another, on a pool of 10 for `seconds`. */
async function rawLoop(url: string, statements: Statement[], loops: number, seconds: number) {
  const pool = new pg.Pool({ connectionString: url, max: 10, options: '-c plan_cache_mode=force_custom_plan' });
  const durations: number[] = [];
  const until = performance.now() + seconds * 1000;
  await Promise.all(Array.from({ length: loops }, async () => {
    while (performance.now() < until) {
      const started = performance.now();
      for (const s of statements) await pool.query({ name: s.name, text: s.text, values: s.values });
      durations.push(performance.now() - started);
    }
  }));
  await pool.end();
  const latency = percentilesUs(durations);
  return { per_second: Math.round(durations.length / seconds), latency_ms: { p50: latency.p50_us / 1000, p90: latency.p90_us / 1000, p99: latency.p99_us / 1000 } };
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sblist-'));
const settled = await settle();
const result: Record<string, unknown> = { ...machine(), load_when_started: settled, database: 'PostgreSQL 15 and PGlite 0.5.14, same 2 cores as server and load' };
try {
  // 1. PostgreSQL, 1M calls.
  const largeUrl = await benchDatabase('calls_1m');
  const large = await seededCalls({ url: largeUrl, perOrg: 10_000 });
  await large.database.close();
  result.seed_1m = large.seed;
  const statements = await appStatements(large.orgId, large.apiKey);
  const cached = await startChild('app', { DATABASE_URL: largeUrl, DATA_DIR: dataDir, IN_PROCESS_WORKER: 'false' });
  const uncached = await startChild('app', { DATABASE_URL: largeUrl, DATA_DIR: dataDir, IN_PROCESS_WORKER: 'false', AUTH_CACHE: 'false' });
  const url = (app: { url: string }) => `${app.url}/api/calls?limit=50`;
  await load('warm-up', url(cached), large.headers, { connections: 10, duration: 2 });
  await load('warm-up', url(uncached), large.headers, { connections: 10, duration: 2 });
  const rounds: Array<Record<string, LoadResult | Awaited<ReturnType<typeof rawLoop>>>> = [];
  for (let round = 0; round < ROUNDS; round++) {
    rounds.push({
      app: await load('app (cached key lookup)', url(cached), large.headers, { connections: CONNECTIONS, duration: ROUND_SECONDS }),
      baseline: await rawLoop(largeUrl, [statements.lookup, statements.list], CONNECTIONS, ROUND_SECONDS),
      app_uncached: await load('app (AUTH_CACHE=false)', url(uncached), large.headers, { connections: CONNECTIONS, duration: ROUND_SECONDS }),
      list_only: await rawLoop(largeUrl, [statements.list], CONNECTIONS, ROUND_SECONDS),
    });
  }
  await cached.stop();
  await uncached.stop();
  const ratio = (r: (typeof rounds)[number]) => (r.app as LoadResult).requests_per_second / (r.baseline as { per_second: number }).per_second;
  const median = [...rounds].sort((a, b) => ratio(a) - ratio(b))[Math.floor(ROUNDS / 2)]!;
  const app = median.app as LoadResult;
  const baseline = median.baseline as Awaited<ReturnType<typeof rawLoop>>;
  const appUncached = median.app_uncached as LoadResult;
  result.list_1m_50_connections = {
    app: app, honest_baseline_lookup_then_list: { ...baseline, statements: [statements.lookup.name, statements.list.name] },
    app_without_key_cache: appUncached, raw_list_statement_only: median.list_only,
    app_vs_baseline: Number(ratio(median).toFixed(2)),
    app_p99_vs_baseline_p99: Number((app.latency_ms.p99 / baseline.latency_ms.p99).toFixed(2)),
    uncached_app_vs_baseline: Number((appUncached.requests_per_second / baseline.per_second).toFixed(2)),
    targets: { app_vs_baseline: 0.75, p99_ratio: 1.5 },
    rounds: rounds.map((r) => ({
      app_rps: (r.app as LoadResult).requests_per_second, app_p99: (r.app as LoadResult).latency_ms.p99,
      baseline_per_s: (r.baseline as { per_second: number }).per_second, baseline_p99: (r.baseline as { latency_ms: { p99: number } }).latency_ms.p99,
      uncached_rps: (r.app_uncached as LoadResult).requests_per_second, list_only_per_s: (r.list_only as { per_second: number }).per_second,
      ratio: Number(ratio(r).toFixed(2)),
    })),
  };

  // 2. The embedded default against PostgreSQL, the same 10,000 calls, 10 connections.
  const smallUrl = await benchDatabase('calls_10k');
  const small = await seededCalls({ url: smallUrl, perOrg: 100 });
  await small.database.close();
  const embeddedDir = path.join(dataDir, 'embedded');
  const embedded = await seededCalls({ dataDir: embeddedDir, perOrg: 100 });
  await embedded.database.close();
  result.seed_10k = small.seed;
  result.seed_10k_embedded = embedded.seed;
  const onServer = await startChild('app', { DATABASE_URL: smallUrl, DATA_DIR: dataDir, IN_PROCESS_WORKER: 'false' });
  const onEmbedded = await startChild('app', { DATABASE_URL: '', DATA_DIR: embeddedDir, IN_PROCESS_WORKER: 'false' });
  await load('warm-up', url(onServer), small.headers, { connections: 10, duration: 2 });
  await load('warm-up', url(onEmbedded), embedded.headers, { connections: 10, duration: 2 });
  const pairs: Array<{ postgres: LoadResult; embedded: LoadResult }> = [];
  for (let round = 0; round < 3; round++) {
    pairs.push({
      postgres: await load('PostgreSQL', url(onServer), small.headers, { connections: 10, duration: ROUND_SECONDS }),
      embedded: await load('embedded (PGlite)', url(onEmbedded), embedded.headers, { connections: 10, duration: ROUND_SECONDS }),
    });
  }
  await onServer.stop();
  await onEmbedded.stop();
  const share = (p: (typeof pairs)[number]) => p.embedded.requests_per_second / p.postgres.requests_per_second;
  const middle = [...pairs].sort((a, b) => share(a) - share(b))[1]!;
  result.embedded_vs_postgres_10k_10_connections = {
    postgres: middle.postgres, embedded: middle.embedded, embedded_vs_postgres: Number(share(middle).toFixed(2)), target: 0.6,
    rounds: pairs.map((p) => ({ postgres_rps: p.postgres.requests_per_second, embedded_rps: p.embedded.requests_per_second, share: Number(share(p).toFixed(2)) })),
  };
  result.load_after = loadAverage();
  console.log(JSON.stringify(result, null, 2));
  console.log(`written to ${writeResult('list', result)}`);
} finally {
  fs.rmSync(dataDir, { recursive: true, force: true });
}
