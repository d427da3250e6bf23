/**
 * `GET /api/calls?limit=50` against honest baselines, in one run (results: bench/results/list.json):
 *
 * 1. PostgreSQL, 1,000,000 calls in each of two shapes (100 organizations × 10,000 calls, and one
 *    organization with all 1,000,000), 50 connections: the app (real server in a child process, key
 *    lookups cached) against raw `pg` loops running the app's exact statements, named or unnamed as the
 *    app sends them, on a pool of 10 with the app's session settings, 50 loops: the list statement alone (what the cached app runs per request: the
 *    like-for-like baseline), and the credential lookup then the list. Targets: app ≥ 0.75 of the
 *    list-only loop, p99 ≤ 1.5× its p99, the p99s taken over every request of every round. The app
 *    with AUTH_CACHE=false runs beside them, and so does the app logging as `npm start` does (LOG_LEVEL
 *    info, one line per request, written to /dev/null; the other app measures log nothing, like the
 *    loops). Each measure also records the CPU it cost per request:
 *    the server process (or the loop's own process) and the PostgreSQL backends, and apart, for the
 *    app, the load generator's (autocannon, in this process), which the loop has no part like. Five interleaved
 *    rounds; the median round by ratio is reported with every round's figures.
 * 2. The embedded default (PGlite, its own thread) against PostgreSQL on the same 10,000 calls at 10
 *    connections, side by side (target ≥ 0.6).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { hashApiKey } from '../src/core/auth/api-key-secret.ts';
import { ApiKeyCredentials } from '../src/modules/api-keys/credential-queries.ts';
import { listCallSummaries } from '../src/modules/calls/call-list-queries.ts';
import { cpuSinceByPart, cpuSnapshot, load, loadAverage, machine, median as medianOf, percentilesUs, settle, startChild, writeResult, type ChildServer, type LoadResult } from './lib.ts';
import { benchDatabase, seededCalls } from './seed.ts';

const CONNECTIONS = 50;
const ROUND_SECONDS = 6;
// The machine's two cores are shared (and the VM's with its host): five interleaved rounds, the median reported.
const ROUNDS = 5;

/** A statement as the app sends it: named (prepared once per connection) or unnamed (planned for its values every time). */
interface Statement { name: string | undefined; text: string; values: unknown[]; types?: pg.CustomTypesConfig }

/** The statements the app runs for one list request, as it runs them (captured from its own code). */
async function appStatements(orgId: string, apiKey: string): Promise<{ lookup: Statement; list: Statement }> {
  const captured: Statement[] = [];
  const capture = {
    prepared: async (name: string, text: string, values: unknown[], types?: pg.CustomTypesConfig) => { captured.push({ name, text, values, types }); return []; },
    planned: async (text: string, values: unknown[], types?: pg.CustomTypesConfig) => { captured.push({ name: undefined, text, values, types }); return []; },
    pool: undefined as never,
  };
  await new ApiKeyCredentials({ database: capture }).findByHash(hashApiKey(apiKey));
  await listCallSummaries(capture, orgId, {}, 51);
  return { lookup: captured[0]!, list: captured[1]! };
}

/** `loops` concurrent loops, each running `statements` one after another, on a pool of 10 for `seconds`; each duration is also pushed to `all`. */
async function rawLoop(url: string, statements: Statement[], loops: number, seconds: number, all: number[]) {
  const pool = new pg.Pool({ connectionString: url, max: 10 }); // the app's session settings (src/db/database.ts)
  const durations: number[] = [];
  await Promise.all(Array.from({ length: 10 }, () => pool.query('SELECT 1'))); // connected before the clock starts
  const cpuBefore = cpuSnapshot([process.pid], databaseOf(url));
  const until = performance.now() + seconds * 1000;
  await Promise.all(Array.from({ length: loops }, async () => {
    while (performance.now() < until) {
      const started = performance.now();
      for (const s of statements) await pool.query({ name: s.name, text: s.text, values: s.values, types: s.types });
      durations.push(performance.now() - started);
    }
  }));
  const cpu = cpuSinceByPart(cpuBefore, [process.pid], databaseOf(url));
  await pool.end();
  all.push(...durations);
  const latency = percentilesUs(durations);
  return {
    per_second: Math.round(durations.length / seconds), latency_ms: { p50: latency.p50_us / 1000, p90: latency.p90_us / 1000, p99: latency.p99_us / 1000 },
    cpu_us_per_request: Math.round(((cpu.processes + cpu.database) * 1000) / durations.length),
    cpu_us_split: { loop: Math.round((cpu.processes * 1000) / durations.length), database: Math.round((cpu.database * 1000) / durations.length) },
  };
}

const databaseOf = (url: string) => new URL(url).pathname.slice(1);

/**
 * autocannon on the app, with the CPU per request of its process and the database's backends, and
 * apart, the load generator's (this process, where autocannon runs): the one part of the app's
 * side of the machine the loop has no counterpart of.
 */
async function appLoad(title: string, app: ChildServer, target: string, headers: Record<string, string>, url: string, all: number[]) {
  const before = cpuSnapshot([app.child.pid!], databaseOf(url));
  const generatorBefore = process.cpuUsage();
  const result = await load(title, target, headers, { connections: CONNECTIONS, duration: ROUND_SECONDS, latencies: all });
  const generator = process.cpuUsage(generatorBefore);
  const cpu = cpuSinceByPart(before, [app.child.pid!], databaseOf(url));
  const perRequest = (ms: number) => Math.round((ms * 1000) / result.requests);
  return {
    ...result, cpu_us_per_request: perRequest(cpu.processes + cpu.database),
    cpu_us_split: { server: perRequest(cpu.processes), database: perRequest(cpu.database), load_generator: perRequest((generator.user + generator.system) / 1000) },
  };
}

type Raw = Awaited<ReturnType<typeof rawLoop>>;
type App = Awaited<ReturnType<typeof appLoad>>;
const p99Of = (durations: number[]) => percentilesUs(durations).p99_us / 1000;

/** The four measures on one shape, interleaved over ROUNDS rounds. */
async function listShape(name: string, orgs: number, perOrg: number, dataDir: string) {
  const databaseUrl = await benchDatabase(name);
  const seeded = await seededCalls({ url: databaseUrl, orgs, perOrg });
  await seeded.database.close();
  const statements = await appStatements(seeded.orgId, seeded.apiKey);
  const cached = await startChild('app', { DATABASE_URL: databaseUrl, DATA_DIR: dataDir, IN_PROCESS_WORKER: 'false' });
  const uncached = await startChild('app', { DATABASE_URL: databaseUrl, DATA_DIR: dataDir, IN_PROCESS_WORKER: 'false', AUTH_CACHE: 'false' });
  const logging = await startChild('app', { DATABASE_URL: databaseUrl, DATA_DIR: dataDir, IN_PROCESS_WORKER: 'false', BENCH_LOG_LEVEL: 'info' }, { discardOutput: true });
  const url = (app: { url: string }) => `${app.url}/api/calls?limit=50`;
  for (const app of [cached, uncached, logging]) await load('warm-up', url(app), seeded.headers, { connections: 10, duration: 2 });
  const all = { app: [] as number[], list_only: [] as number[], lookup_then_list: [] as number[], app_uncached: [] as number[], app_logging: [] as number[] };
  const rounds: Array<{ app: App; list_only: Raw; lookup_then_list: Raw; app_uncached: App; app_logging: App }> = [];
  for (let round = 0; round < ROUNDS; round++) {
    // Every other round runs the measures in the opposite order: a measure inherits the tail of the one before.
    const steps = {
      app: () => appLoad('app (cached key lookup)', cached, url(cached), seeded.headers, databaseUrl, all.app),
      list_only: () => rawLoop(databaseUrl, [statements.list], CONNECTIONS, ROUND_SECONDS, all.list_only),
      lookup_then_list: () => rawLoop(databaseUrl, [statements.lookup, statements.list], CONNECTIONS, ROUND_SECONDS, all.lookup_then_list),
      app_uncached: () => appLoad('app (AUTH_CACHE=false)', uncached, url(uncached), seeded.headers, databaseUrl, all.app_uncached),
      app_logging: () => appLoad('app (LOG_LEVEL=info)', logging, url(logging), seeded.headers, databaseUrl, all.app_logging),
    };
    const order = Object.keys(steps) as Array<keyof typeof steps>;
    const measured: Partial<(typeof rounds)[number]> = {};
    for (const key of round % 2 ? order.reverse() : order) (measured as Record<string, unknown>)[key] = await steps[key]();
    rounds.push(measured as (typeof rounds)[number]);
  }
  await cached.stop();
  await uncached.stop();
  await logging.stop();
  const ratio = (r: (typeof rounds)[number]) => r.app.requests_per_second / r.list_only.per_second;
  const median = [...rounds].sort((a, b) => ratio(a) - ratio(b))[Math.floor(ROUNDS / 2)]!;
  const p99 = {
    app: p99Of(all.app), list_only: p99Of(all.list_only), lookup_then_list: p99Of(all.lookup_then_list), app_uncached: p99Of(all.app_uncached),
    app_logging: p99Of(all.app_logging),
  };
  return {
    seed: seeded.seed,
    median_round: median,
    app_vs_list_only: Number(ratio(median).toFixed(2)),
    app_vs_lookup_then_list: Number((median.app.requests_per_second / median.lookup_then_list.per_second).toFixed(2)),
    uncached_app_vs_lookup_then_list: Number((median.app_uncached.requests_per_second / median.lookup_then_list.per_second).toFixed(2)),
    // The app as `npm start` runs it: its rate against the list-only loop's in the same round (median over rounds), and what the log line costs it.
    logging_app_vs_list_only: Number(medianOf(rounds.map((r) => r.app_logging.requests_per_second / r.list_only.per_second)).toFixed(2)),
    logging_app_vs_silent_app: Number(medianOf(rounds.map((r) => r.app_logging.requests_per_second / r.app.requests_per_second)).toFixed(2)),
    logging_app_p99_vs_list_only_p99: Number((p99.app_logging / p99.list_only).toFixed(2)),
    p99_over_all_rounds_ms: p99,
    app_p99_vs_list_only_p99: Number((p99.app / p99.list_only).toFixed(2)),
    targets: { app_vs_list_only: 0.75, p99_ratio: 1.5 },
    rounds: rounds.map((r) => ({
      app_rps: r.app.requests_per_second, list_only_per_s: r.list_only.per_second, lookup_then_list_per_s: r.lookup_then_list.per_second,
      uncached_rps: r.app_uncached.requests_per_second, logging_rps: r.app_logging.requests_per_second, ratio: Number(ratio(r).toFixed(2)),
      app_cpu_us: r.app.cpu_us_per_request, list_only_cpu_us: r.list_only.cpu_us_per_request,
      app_cpu_us_split: r.app.cpu_us_split, list_only_cpu_us_split: r.list_only.cpu_us_split, logging_app_cpu_us_split: r.app_logging.cpu_us_split,
    })),
  };
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sblist-'));
const settled = await settle();
const result: Record<string, unknown> = { ...machine(), load_when_started: settled, database: 'PostgreSQL 15 and PGlite 0.5.14, same 2 cores as server and load' };
try {
  // 1. PostgreSQL, 1M calls in two shapes.
  result.list_100_orgs_x_10k_50_connections = await listShape('calls_1m', 100, 10_000, dataDir);
  result.list_1_org_x_1m_50_connections = await listShape('calls_1m_one_org', 1, 1_000_000, dataDir);

  // 2. The embedded default against PostgreSQL, the same 10,000 calls, 10 connections.
  const smallUrl = await benchDatabase('calls_10k');
  const small = await seededCalls({ url: smallUrl, perOrg: 100 });
  await small.database.close();
  const embeddedDir = path.join(dataDir, 'embedded');
  const embedded = await seededCalls({ dataDir: embeddedDir, perOrg: 100 });
  await embedded.database.close();
  result.seed_10k = small.seed;
  result.seed_10k_embedded = embedded.seed;
  const url = (app: { url: string }) => `${app.url}/api/calls?limit=50`;
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
