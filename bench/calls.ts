/**
 * Calls benchmark on PostgreSQL, 100 organizations, seeded directly (SQL), the real server in a
 * child process, autocannon at 50 connections:
 *  - GET /api/calls?limit=50: first page and a deep page (cursor ~9,000 calls in) at 1,000,000 calls,
 *    against a raw `pg` loop running the same SQL on a pool of the same size (target: p99 < 25 ms,
 *    throughput ≥ 60 % of raw, deep page within 1.2× of the first);
 *  - analytics, 30 days per day and 24 h per minute, at 10,000 and at 1,000,000 calls (target p50 < 20 ms,
 *    within 1.2× between the two);
 *  - download of a 500 MB recording: the server's RSS growth (target < 64 MB).
 * Results: bench/results/calls.json.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { openDatabase, runMigrations } from '../src/db/database.ts';
import { encodeCursor } from '../src/core/cursor.ts';
import { wavHeader } from '../src/modules/calls/audio.ts';
import { provisionOrganization } from '../src/modules/organizations/service.ts';
import { issueApiKey } from '../src/modules/api-keys/service.ts';
import { benchDatabaseUrl, load, machine, startChild, writeResult, type LoadResult } from './lib.ts';

const ORGS = 100;
// Two databases, seeded once and reused: 10,000 calls (100 per organization) and 1,000,000 (10,000 each).
const smallUrl = await benchDatabaseUrl('switchboard_bench_calls_10k');
const databaseUrl = await benchDatabaseUrl('switchboard_bench_calls');
let database = await openDatabase({ databaseUrl: smallUrl, dataDir: '/tmp', poolSize: 4 });
const q = (text: string, params: unknown[] = []) => database.pool.query(text, params);

async function ensureOrgs(): Promise<string[]> {
  const { rows } = await q("SELECT id FROM organizations WHERE name LIKE 'calls bench %' ORDER BY name");
  const ids = rows.map((r) => r.id as string);
  while (ids.length < ORGS) {
    const id = (await provisionOrganization(database.db, { name: `calls bench ${String(ids.length).padStart(3, '0')}` })).organization_id;
    await q(`INSERT INTO agents (id, client_id, agent_name, language, stt_provider, tts_provider, llm_provider, llm_model, temperature, max_call_duration_seconds)
      SELECT 'agent_' || substr(md5($1 || a::text), 1, 12), $1, 'Bench agent ' || a, 'EN', 'deepgram', 'elevenlabs', 'openai', 'gpt-4o-mini', 0.7, 600
      FROM generate_series(1, 5) a`, [id]);
    ids.push(id);
  }
  return ids;
}

/** Brings every organization to `perOrg` finished calls over the last 30 days, and rebuilds the rollups from them. */
async function seedCalls(perOrg: number): Promise<number> {
  const { rows: [{ n }] } = await q("SELECT count(*)::int AS n FROM calls c JOIN organizations o ON o.id = c.client_id WHERE o.name LIKE 'calls bench %'");
  if (n === perOrg * ORGS) return 0;
  const started = performance.now();
  await q(`INSERT INTO calls (call_sid, client_id, agent_id, agent_name, call_type, status, from_number, to_number, recording_enabled,
      start_time, end_time, end_reason, duration_seconds, turn_count, total_cost, billing_status, created_at, updated_at)
    SELECT 'call_' || substr(md5(o.id || g::text), 1, 20), o.id, 'agent_' || substr(md5(o.id || (1 + g % 5)::text), 1, 12), 'Bench agent ' || (1 + g % 5),
      (ARRAY['inbound','outbound','preview'])[1 + g % 3], 'completed', '+14155550100', '+1415555' || lpad((g % 10000)::text, 4, '0'), false,
      t, t + (d || ' seconds')::interval, 'user_hangup', d, 6, round((d * 0.05)::numeric, 4), 'billed', t, t
    FROM (SELECT id FROM organizations WHERE name LIKE 'calls bench %') o,
      LATERAL (SELECT g, now() - random() * interval '30 days' AS t, 20 + floor(random() * 400) AS d
               FROM generate_series((SELECT count(*) FROM calls WHERE client_id = o.id) + 1, $1) g) s`, [perOrg]);
  await q("DELETE FROM call_rollups WHERE client_id IN (SELECT id FROM organizations WHERE name LIKE 'calls bench %')");
  for (const [grain, step] of [['minute', 60], ['quarter', 900], ['hour', 3600]] as const) {
    for (const agentColumn of ['agent_id', "'*'"]) {
      await q(`INSERT INTO call_rollups (client_id, agent_id, grain, bucket, calls, cost_credits, duration_seconds)
        SELECT client_id, ${agentColumn}, '${grain}', to_timestamp(floor(extract(epoch FROM start_time) / ${step}) * ${step}), count(*), sum(total_cost), sum(duration_seconds)
        FROM calls WHERE client_id IN (SELECT id FROM organizations WHERE name LIKE 'calls bench %') GROUP BY 1, 2, 4`);
    }
  }
  await q('ANALYZE calls; ANALYZE call_rollups');
  return (performance.now() - started) / 1000;
}

/** Seeds one database (when needed) and returns its first organization with a fresh key. */
async function prepare(perOrg: number) {
  await runMigrations(database);
  const orgIds = await ensureOrgs();
  const seconds = await seedCalls(perOrg);
  const orgId = orgIds[0]!;
  const { rows: [owner] } = await q('SELECT user_id FROM memberships WHERE client_id = $1 LIMIT 1', [orgId]);
  const apiKey = (await issueApiKey(database.db, orgId, { userId: owner.user_id, name: 'bench', role: 'user' })).key;
  return { orgId, seconds, headers: { 'x-api-key': apiKey, 'x-organization-id': orgId } };
}
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sbcalls-'));
const CONNECTIONS = 50;

async function analytics(app: { url: string }, label: string, headers: Record<string, string>) {
  await load('warm-up', `${app.url}/api/analytics/calls/daily?timezone=Europe/Berlin`, headers, { connections: 4, duration: 2 });
  await load('warm-up', `${app.url}/api/analytics/calls/daily?start_time=${encodeURIComponent(new Date(Date.now() - 86_400_000).toISOString())}`, headers, { connections: 4, duration: 2 });
  const today = new Date().toISOString().slice(0, 10);
  const monthAgo = new Date(Date.now() - 30 * 86_400_000).toISOString().slice(0, 10);
  const dayAgo = new Date(Date.now() - 86_400_000).toISOString();
  const days = `${app.url}/api/analytics/calls/daily?start_date=${monthAgo}&end_date=${today}&timezone=Europe/Berlin`;
  const minutes = `${app.url}/api/analytics/calls/daily?start_time=${encodeURIComponent(dayAgo)}`;
  // One connection: the request's own latency. Ten: under load, where queueing multiplies any difference.
  return {
    days_30: await load(`${label}: 30 days daily`, days, headers, { connections: 1, duration: 5 }),
    minutes_24h: await load(`${label}: 24 h per minute`, minutes, headers, { connections: 1, duration: 5 }),
    days_30_10_connections: await load(`${label}: 30 days daily, 10 connections`, days, headers, { connections: 10, duration: 5 }),
    minutes_24h_10_connections: await load(`${label}: 24 h per minute, 10 connections`, minutes, headers, { connections: 10, duration: 5 }),
  };
}

/** The list's SQL, run by plain `pg` on a pool the size of the app's, CONNECTIONS loops at once. */
async function rawLoop(orgId: string, seconds: number): Promise<{ queries_per_second: number; latency_ms: { p50: number; p99: number } }> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10, options: '-c plan_cache_mode=force_custom_plan' });
  const text = `select call_sid, client_id, agent_id, agent_name, call_type, status, from_number, to_number, recording_enabled, start_time, end_time,
    end_reason, duration_seconds, turn_count, total_cost, billing_status, created_at, updated_at
    from calls where client_id = $1 order by created_at desc, call_sid desc limit $2`;
  const latencies: number[] = [];
  const until = performance.now() + seconds * 1000;
  await Promise.all(Array.from({ length: CONNECTIONS }, async () => {
    while (performance.now() < until) {
      const started = performance.now();
      await pool.query({ name: 'bench-list', text, values: [orgId, 51] });
      latencies.push(performance.now() - started);
    }
  }));
  await pool.end();
  latencies.sort((a, b) => a - b);
  const at = (q: number) => Math.round(latencies[Math.floor(q * (latencies.length - 1))]!);
  return { queries_per_second: Math.round(latencies.length / seconds), latency_ms: { p50: at(0.5), p99: at(0.99) } };
}

const small = await prepare(100);
let app = await startChild('app', { DATABASE_URL: smallUrl, DATA_DIR: dataDir, IN_PROCESS_WORKER: 'false' });
const result: Record<string, unknown> = { ...machine(), database: 'PostgreSQL 15, same 2 cores as server and load', organizations: ORGS };
try {
  result.seed_10k_seconds = small.seconds;
  await load('warm-up', `${app.url}/api/calls?limit=50`, small.headers, { connections: 10, duration: 2 });
  const smallSeries = await analytics(app, '10k calls', small.headers);
  await app.stop();
  await database.close();

  database = await openDatabase({ databaseUrl, dataDir: '/tmp', poolSize: 4 });
  const large = await prepare(10_000);
  const { orgId, headers } = large;
  result.seed_1m_seconds = large.seconds;
  app = await startChild('app', { DATABASE_URL: databaseUrl, DATA_DIR: dataDir, IN_PROCESS_WORKER: 'false' });
  await load('warm-up', `${app.url}/api/calls?limit=50`, headers, { connections: 10, duration: 2 });
  const largeSeries = await analytics(app, '1M calls', headers);

  const { rows: [deep] } = await q('SELECT created_at, call_sid FROM calls WHERE client_id = $1 ORDER BY created_at DESC, call_sid DESC OFFSET 9000 LIMIT 1', [orgId]);
  const deepCursor = encodeCursor({ value: deep.created_at.toISOString(), id: deep.call_sid });
  // Three rounds, each app first page, app deep page and the raw loop back to back, so a noisy
  // moment of the shared machine touches all three; the median round is reported.
  const rounds: Array<{ first: LoadResult; deep: LoadResult; raw: Awaited<ReturnType<typeof rawLoop>>; ratio: number }> = [];
  for (let round = 0; round < 3; round++) {
    const first = await load('calls first page', `${app.url}/api/calls?limit=50`, headers, { connections: CONNECTIONS, duration: 6 });
    const deep = await load('calls deep page', `${app.url}/api/calls?limit=50&cursor=${deepCursor}`, headers, { connections: CONNECTIONS, duration: 6 });
    const raw = await rawLoop(orgId, 6);
    rounds.push({ first, deep, raw, ratio: Number((first.requests_per_second / raw.queries_per_second).toFixed(2)) });
  }
  const median = [...rounds].sort((a, b) => a.ratio - b.ratio)[1]!;
  const { first, deep: deepPage, raw } = median;

  // A 500 MB WAV recording on the local store, downloaded whole over HTTP from a fresh server
  // (so the garbage of the load above does not count as the download's memory).
  await app.stop();
  app = await startChild('app', { DATABASE_URL: databaseUrl, DATA_DIR: dataDir, IN_PROCESS_WORKER: 'false' });
  await load('warm-up', `${app.url}/api/calls?limit=50`, headers, { connections: 4, duration: 1 });
  const { rows: [target] } = await q('SELECT call_sid, to_number FROM calls WHERE client_id = $1 LIMIT 1', [orgId]);
  const key = `${orgId}/recordings/${target.call_sid}/recording.wav`;
  const file = path.join(dataDir, 'objects', key);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const dataBytes = 500 * 1024 * 1024;
  const out = fs.openSync(file, 'w');
  fs.writeSync(out, wavHeader(dataBytes));
  const block = Buffer.alloc(8 * 1024 * 1024, 1);
  for (let written = 0; written < dataBytes; written += block.length) fs.writeSync(out, block);
  fs.closeSync(out);
  const size = fs.statSync(file).size;
  await q("UPDATE calls SET recording_enabled = true, recording_key = $1, recording_content_type = 'audio/wav', recording_bytes = $2 WHERE call_sid = $3", [key, size, target.call_sid]);
  const rss = () => Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${app.child.pid}/status`, 'utf8'))![1]) / 1024;
  const rssBefore = rss();
  let rssMax = rssBefore;
  const sampler = setInterval(() => { rssMax = Math.max(rssMax, rss()); }, 10);
  const started = performance.now();
  const response = await fetch(`${app.url}/api/calls/${target.call_sid}/recording/download`, { headers });
  let received = 0;
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) received += chunk.length;
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  fs.rmSync(file);

  Object.assign(result, {
    list: {
      connections: CONNECTIONS,
      first_page: first,
      deep_page: { ...deepPage, position: 9000 },
      raw_pg_same_sql: { ...raw, pool: 10, loops: CONNECTIONS },
      app_vs_raw_throughput: Number((first.requests_per_second / raw.queries_per_second).toFixed(2)),
      deep_vs_first_p99: Number((deepPage.latency_ms.p99 / Math.max(first.latency_ms.p99, 1)).toFixed(2)),
      targets: { p99_ms: 25, app_vs_raw_throughput: 0.6, deep_vs_first: 1.2 },
      rounds: rounds.map((r) => ({ first_rps: r.first.requests_per_second, first_p99: r.first.latency_ms.p99, deep_rps: r.deep.requests_per_second, deep_p99: r.deep.latency_ms.p99, raw_qps: r.raw.queries_per_second, raw_p99: r.raw.latency_ms.p99, ratio: r.ratio })),
    },
    analytics: {
      at_10k_calls: smallSeries,
      at_1m_calls: largeSeries,
      // Means (autocannon's percentiles are whole milliseconds, too coarse at one connection).
      mean_ratio_1m_vs_10k: Object.fromEntries((['days_30', 'minutes_24h', 'days_30_10_connections', 'minutes_24h_10_connections'] as const).map((k) =>
        [k, Number((largeSeries[k].latency_ms.mean / smallSeries[k].latency_ms.mean).toFixed(2))])),
      targets: { p50_ms: 20, ratio: 1.2 },
    },
    download_500mb: {
      status: response.status, bytes: received, content_length: Number(response.headers.get('content-length')), seconds: Number(seconds.toFixed(2)),
      rss_before_mb: Math.round(rssBefore), rss_max_mb: Math.round(rssMax), rss_growth_mb: Math.round(rssMax - rssBefore), target_growth_mb: 64,
    },
  });
  console.log(JSON.stringify(result, null, 2));
  console.log(`written to ${writeResult('calls', result)}`);
} finally {
  await app.stop();
  await database.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
