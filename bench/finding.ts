/**
 * Finding and counting calls (issue 18), on PostgreSQL, one organization holding every call (the
 * hardest case for per-organization queries), seeded directly in SQL with transcripts (4 turns of
 * 12 words from a 300-word vocabulary; "refund" in about 3% of the calls) and the usage rollups
 * built by the migration's own backfill query:
 *  - `q` search (GET /api/calls?q=…&limit=50): p50/p99 of sequential requests (target p50 < 100 ms);
 *  - GET /api/analytics/usage?group_by=agent, day granularity over 30 days: p50 at 10,000 calls and at
 *    the largest size (target < 50 ms, flat);
 *  - an export of every call (CSV) by a `switchboard worker` process: its duration and the worker's
 *    RSS growth, sampled from /proc every 10 ms (target < 64 MB).
 * `BENCH_FINDING_SIZES` (default `10000,100000`) chooses the sizes; `BENCH_FINDING_ONLY=export` measures
 * the export alone and keeps the other measures of the size's previous entry. `BENCH_WORKER_NODE_ARGS`
 * adds Node options to the worker (e.g. `--trace-gc`, or `--import` of a memory probe) when looking into it.
 * Results: bench/results/finding.json.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase, runMigrations } from '../src/db/database.ts';
import { provisionOrganization } from '../src/modules/organizations/service.ts';
import { issueApiKey } from '../src/modules/api-keys/service.ts';
import { loadAverage, machine, sequentialLatency, settle, startChild, writeResult } from './lib.ts';
import { benchDatabase } from './seed.ts';

const SIZES = (process.env.BENCH_FINDING_SIZES ?? '10000,100000').split(',').map(Number);
const EXPORT_ONLY = process.env.BENCH_FINDING_ONLY === 'export';
const WORKER_NODE_ARGS = (process.env.BENCH_WORKER_NODE_ARGS ?? '').split(' ').filter(Boolean);
const ENCRYPTION_KEY = Buffer.alloc(32, 7).toString('base64');

/** The usage rollups of the migration (0022_usage_rollups.sql): its backfill statement, as written there. */
function backfillStatement(): string {
  const text = fs.readFileSync(path.join(import.meta.dirname, '..', 'migrations', '0022_usage_rollups.sql'), 'utf8');
  return text.slice(text.indexOf('INSERT INTO call_usage_rollups')).replace(/;\s*$/, '');
}

async function seed(url: string, calls: number) {
  const database = await openDatabase({ databaseUrl: url, dataDir: '/tmp', poolSize: 2 });
  await runMigrations(database);
  const q = (text: string, params: unknown[] = []) => database.pool.query(text, params);
  await q('CREATE TABLE IF NOT EXISTS bench_meta (key text PRIMARY KEY, value double precision NOT NULL)');
  let { rows: [org] } = await q("SELECT id FROM organizations WHERE name = 'finding bench'");
  if (!org) {
    org = { id: (await provisionOrganization(database.db, { name: 'finding bench' })).organization_id };
    await q(`INSERT INTO agents (id, client_id, agent_name, language, stt_provider, tts_provider, llm_provider, llm_model, temperature, max_call_duration_seconds)
      SELECT 'agent_' || substr(md5($1 || a::text), 1, 12), $1, 'Bench agent ' || a, 'EN', 'deepgram', 'elevenlabs', 'openai', 'gpt-4o-mini', 0.7, 600
      FROM generate_series(1, 10) a`, [org.id]);
  }
  const orgId = org.id as string;
  const { rows: [{ n }] } = await q('SELECT count(*)::int AS n FROM calls WHERE client_id = $1', [orgId]);
  let seconds = 0;
  if (n !== calls) {
    const started = performance.now();
    await q('DELETE FROM calls WHERE client_id = $1', [orgId]);
    await q('DELETE FROM call_usage_rollups WHERE client_id = $1', [orgId]);
    // Words w0..w299, Zipf-like (low numbers frequent); "refund" in about 3% of the calls, in one turn.
    for (let from = 1; from <= calls; from += 20_000) {
      await q(`INSERT INTO calls (call_sid, client_id, agent_id, agent_name, call_type, status, from_number, to_number, recording_enabled,
          start_time, end_time, end_reason, duration_seconds, turn_count, total_cost, cost_breakdown, billing_status, metadata, transcript, created_at, updated_at)
        SELECT 'call_' || substr(md5($1 || g::text), 1, 20), $1, 'agent_' || substr(md5($1 || (1 + g % 10)::text), 1, 12), 'Bench agent ' || (1 + g % 10),
          (ARRAY['inbound','outbound'])[1 + g % 2], (ARRAY['completed','completed','completed','failed','no_answer'])[1 + g % 5],
          '+1415555' || lpad((g % 20)::text, 4, '0'), '+1628555' || lpad((g % 997)::text, 4, '0'), false,
          t, t + (d || ' seconds')::interval, (ARRAY['user_hangup','agent_hangup','error'])[1 + g % 3], d, 4, c,
          jsonb_build_object('stt', c / 5, 'llm', c / 5, 'tts', c / 5, 'telephony', c / 5, 'platform', c - 4 * (c / 5)), 'billed',
          jsonb_build_object('customer_id', 'cust-' || (g % 50)),
          (SELECT jsonb_agg(jsonb_build_object('role', CASE WHEN k % 2 = 0 THEN 'agent' ELSE 'user' END, 'start_seconds', k * 5,
              'text', (SELECT string_agg(CASE WHEN k = 2 AND w = 1 AND g % 33 = 0 THEN 'refund' ELSE 'w' || floor(300 * random() ^ 2)::int END, ' ')
                       FROM generate_series(1, 12) w)))
           FROM generate_series(1, 4) k),
          t, t
        FROM (SELECT g, now() - random() * interval '30 days' AS t, 20 + floor(random() * 400) AS d, round((random() * 2)::numeric, 2) AS c
              FROM generate_series($2::int, $3::int) g) s`, [orgId, from, Math.min(calls, from + 19_999)]);
    }
    await q(`${backfillStatement().replace('FROM calls WHERE status IN', 'FROM calls WHERE client_id = $1 AND status IN')}`, [orgId]);
    await q('ANALYZE calls; ANALYZE call_usage_rollups');
    seconds = (performance.now() - started) / 1000;
    await q('INSERT INTO bench_meta VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value', [`finding_seed_${calls}`, seconds]);
  }
  const { rows: [recorded] } = await q('SELECT value FROM bench_meta WHERE key = $1', [`finding_seed_${calls}`]);
  const { rows: [owner] } = await q('SELECT user_id FROM memberships WHERE client_id = $1 LIMIT 1', [orgId]);
  const apiKey = (await issueApiKey(database.db, orgId, { userId: owner.user_id, name: 'bench', role: 'admin' })).key;
  const { rows: [{ refunds }] } = await q("SELECT count(*)::int AS refunds FROM calls WHERE client_id = $1 AND transcript_search @@ websearch_to_tsquery('english', 'refund')", [orgId]);
  await database.close();
  return { orgId, headers: { 'x-api-key': apiKey, 'x-organization-id': orgId }, seed_seconds: Number(((recorded?.value as number) ?? seconds).toFixed(1)), reused: seconds === 0, refunds };
}

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

/** An export of every call, worked by a `switchboard worker` process of its own: duration and the worker's RSS growth. */
async function exportRun(url: string, appUrl: string, headers: Record<string, string>, dataDir: string) {
  const worker = spawn(process.execPath, [...WORKER_NODE_ARGS, '--import', './src/module-hooks.ts', 'src/worker.ts'], {
    env: { ...process.env, DATABASE_URL: url, DATA_DIR: dataDir, LOG_LEVEL: 'silent', ENCRYPTION_KEY, JWT_SECRET: 'bench-secret-0123456789-0123456789', JOB_POLL_SECONDS: '1' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    worker.stdout!.on('data', (chunk: Buffer) => { if (chunk.toString().includes('worker started')) resolve(); });
    worker.once('exit', (code) => reject(new Error(`worker exited with ${code}`)));
  });
  await new Promise((r) => setTimeout(r, 2000)); // settled after start
  const before = rssMb(worker.pid!);
  let peak = before;
  const sampler = setInterval(() => { try { peak = Math.max(peak, rssMb(worker.pid!)); } catch { /* exiting */ } }, 10);
  const started = performance.now();
  const created: any = await (await fetch(`${appUrl}/api/calls/exports`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ format: 'csv' }) })).json();
  let view: any;
  for (;;) {
    view = ((await (await fetch(`${appUrl}/api/calls/exports/${created.data.export_id}`, { headers })).json()) as any).data;
    if (view.status === 'completed' || view.status === 'failed') break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  // Stopped by SIGTERM; if it has not exited 15 s later (graceful shutdown waiting on a connection), killed.
  const exited = new Promise((r) => worker.once('exit', r));
  worker.kill('SIGTERM');
  const graceful = await Promise.race([exited.then(() => true), new Promise((r) => setTimeout(() => r(false), 15_000))]);
  if (!graceful) {
    worker.kill('SIGKILL');
    await exited;
  }
  return {
    status: view.status, rows: view.row_count, megabytes: Number((view.bytes / 1e6).toFixed(1)), seconds: Number(seconds.toFixed(1)),
    rows_per_second: Math.round(view.row_count / seconds), worker_rss_before_mb: Math.round(before), worker_rss_peak_mb: Math.round(peak),
    worker_rss_growth_mb: Math.round(peak - before), target_growth_mb: 64, met: peak - before < 64, worker_exited_on_sigterm: graceful,
  };
}

// Sizes measured by an earlier run are kept (a run may measure one size only); each size's entry records its own load.
const previous = (() => { try { return JSON.parse(fs.readFileSync(path.join(import.meta.dirname, 'results', 'finding.json'), 'utf8')); } catch { return {}; } })();
const result: Record<string, unknown> = { ...machine(), database: 'PostgreSQL 15 on the same 2 cores (shared with two other agents)', sizes: { ...previous.sizes } };
for (const size of SIZES) {
  const url = await benchDatabase(`finding_${size}`);
  const seeded = await seed(url, size);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sbfind-'));
  const app = await startChild('app', { DATABASE_URL: url, DATA_DIR: dataDir, IN_PROCESS_WORKER: 'false', ENCRYPTION_KEY });
  try {
    const end = new Date();
    const start = new Date(end.getTime() - 30 * 86_400_000);
    const usage = `${app.url}/api/analytics/usage?granularity=day&group_by=agent&start=${start.toISOString()}&end=${end.toISOString()}`;
    const load_before = await settle(30);
    const earlier = (result.sizes as Record<string, Record<string, unknown>>)[String(size)];
    if (EXPORT_ONLY && earlier) {
      // The export alone, with its seed and the load it ran under; the size's other measures stay those of their own run.
      const export_csv_all = {
        ...(await exportRun(url, app.url, seeded.headers, dataDir)), measured_alone: true,
        seed: { seconds: seeded.seed_seconds, reused: seeded.reused }, load_before, load_after: loadAverage(),
      };
      (result.sizes as Record<string, unknown>)[String(size)] = { ...earlier, export_csv_all };
      console.log(JSON.stringify(export_csv_all, null, 2));
      writeResult('finding', result);
      continue;
    }
    const entry = {
      calls: size, seed: { seconds: seeded.seed_seconds, reused: seeded.reused }, calls_mentioning_refund: seeded.refunds, load_before,
      search_refund: await sequentialLatency(`${app.url}/api/calls?limit=50&q=refund`, seeded.headers, { requests: 200, warmup: 20 }),
      search_phrase_exclusion: await sequentialLatency(`${app.url}/api/calls?limit=50&q=${encodeURIComponent('"w1 w2" -w3')}`, seeded.headers, { requests: 200, warmup: 20 }),
      search_refund_last_7_days: await sequentialLatency(`${app.url}/api/calls?limit=50&q=refund&from=${new Date(end.getTime() - 7 * 86_400_000).toISOString().slice(0, 10)}`, seeded.headers, { requests: 200, warmup: 20 }),
      usage_agent_day_30d: await sequentialLatency(usage, seeded.headers, { requests: 300, warmup: 30 }),
      usage_agent_day_30d_sums_only: await sequentialLatency(`${usage}&metrics=calls,cost,duration_seconds`, seeded.headers, { requests: 300, warmup: 30 }),
      usage_metadata_customer_day_30d: await sequentialLatency(`${app.url}/api/analytics/usage?granularity=day&group_by=metadata.customer_id&start=${start.toISOString()}&end=${end.toISOString()}&metrics=calls,cost`, seeded.headers, { requests: 30, warmup: 3 }),
      export_csv_all: await exportRun(url, app.url, seeded.headers, dataDir),
      load_after: loadAverage(),
    };
    (result.sizes as Record<string, unknown>)[String(size)] = entry;
    console.log(JSON.stringify(entry, null, 2));
    writeResult('finding', result);
  } finally {
    await app.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
console.log(`written ${writeResult('finding', result)}`);
