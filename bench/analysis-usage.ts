/**
 * Usage analytics by post-call analysis (issue 32, item 6; extensions.md §13: `group_by=analysis.success`
 * and the metric `success_rate`), on PostgreSQL, one organization holding every call (the hardest
 * case), the real server in a child process. Target: p50 < 50 ms over 30 days, flat from 10k calls.
 * Data, seeded in SQL per size (BENCH_ANALYSIS_SIZES, default 10000,100000,1000000; a database each,
 * reused by later runs): calls spread at random over the last 30 days, 10 agents at versions 1-3,
 * inbound/outbound, 80 % completed (15 % failed, 5 % no_answer), a 2-turn transcript on the
 * completed ones; of those, 95 % analyzed (success true 65 %, false 25 %, null 10 %; sentiment
 * positive 50 %, neutral 35 %, negative 15 %; a structured_data of two keys; its cost in the
 * breakdown), 3 % with a failed analysis, 2 % none. The rollups the endpoint reads
 * (call_usage_rollups, every grain and dimension with the analysis counts) and call_rollups are
 * built from the calls by bench/seed.ts's statements; at 10k both are checked: the rollups row by
 * row against the product's own `addCallToUsage` replayed call by call into a second organization,
 * and the endpoint's answer against a count over the calls table.
 * Measures per size: p50/p99 of sequential requests on one connection (day granularity, UTC, the
 * last 30 days) and a short concurrent load (10 connections, 8 s). Load averages are recorded.
 * Results: bench/results/analysis-usage.json.
 */
import fs from 'node:fs';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { openDatabase, runMigrations, type Database } from '../src/db/database.ts';
import { calls } from '../src/db/schema/index.ts';
import { provisionOrganization } from '../src/modules/organizations/service.ts';
import { issueApiKey } from '../src/modules/api-keys/service.ts';
import { addCallToUsage } from '../src/modules/analytics/rollup-queries.ts';
import { usageOf } from '../src/modules/calls/late-report.ts';
import { load, loadAverage, machine, sequentialLatency, settle, startChild, writeResult } from './lib.ts';
import { benchDatabase, CALL_ROLLUPS_BACKFILL, USAGE_ROLLUPS_BACKFILL } from './seed.ts';

const SIZES = (process.env.BENCH_ANALYSIS_SIZES ?? '10000,100000,1000000').split(',').map(Number);
const CHUNK = 50_000;
const ORG = 'analysis usage bench';

async function seed(database: Database, size: number) {
  const q = (text: string, params: unknown[] = []) => database.pool.query(text, params);
  await q('CREATE TABLE IF NOT EXISTS bench_meta (key text PRIMARY KEY, value double precision NOT NULL)');
  let { rows: [org] } = await q('SELECT id FROM organizations WHERE name = $1', [ORG]);
  if (!org) {
    org = { id: (await provisionOrganization(database.db, { name: ORG })).organization_id };
    await q(`INSERT INTO agents (id, client_id, agent_name, language, stt_provider, tts_provider, llm_provider, llm_model, temperature, max_call_duration_seconds, version)
      SELECT 'agent_' || substr(md5($1 || a::text), 1, 12), $1, 'Bench agent ' || a, 'EN', 'deepgram', 'elevenlabs', 'openai', 'gpt-4o-mini', 0.7, 600, 3
      FROM generate_series(1, 10) a`, [org.id]);
  }
  const orgId = org.id as string;
  const { rows: [{ n }] } = await q('SELECT count(*)::int AS n FROM calls WHERE client_id = $1', [orgId]);
  let seconds = 0;
  if (n !== size) {
    const started = performance.now();
    await q('DELETE FROM calls WHERE client_id = $1', [orgId]);
    await q('DELETE FROM call_usage_rollups WHERE client_id = $1', [orgId]);
    await q('DELETE FROM call_rollups WHERE client_id = $1', [orgId]);
    for (let from = 1; from <= size; from += CHUNK) {
      // r1 picks the status, r2 the analysis's outcome, r3 its sentiment: independent draws per call.
      await q(`INSERT INTO calls (call_sid, client_id, agent_id, agent_name, agent_version, call_type, status, from_number, to_number, recording_enabled,
          start_time, end_time, end_reason, duration_seconds, turn_count, transcript, total_cost, cost_breakdown, billing_status, analysis, created_at, updated_at)
        SELECT 'call_' || substr(md5($1 || g::text), 1, 20), $1, 'agent_' || substr(md5($1 || (1 + g % 10)::text), 1, 12), 'Bench agent ' || (1 + g % 10), 1 + g % 3,
          (ARRAY['inbound','outbound'])[1 + g % 2], st, '+1415555' || lpad((g % 20)::text, 4, '0'), '+1628555' || lpad((g % 997)::text, 4, '0'), false,
          t, t + (d || ' seconds')::interval, CASE st WHEN 'completed' THEN 'user_hangup' WHEN 'failed' THEN 'error' ELSE 'no_answer' END, d,
          CASE WHEN st = 'completed' THEN 2 ELSE 0 END,
          CASE WHEN st = 'completed' THEN '[{"role":"agent","text":"Luigi''s, how can I help?","start_seconds":0},{"role":"user","text":"A table for four tonight, please.","start_seconds":2}]'::jsonb END,
          c + ac, jsonb_build_object('stt', c / 5, 'llm', c / 5, 'tts', c / 5, 'telephony', c / 5, 'platform', c - 4 * (c / 5)) || CASE WHEN ac > 0 THEN jsonb_build_object('analysis', ac) ELSE '{}'::jsonb END,
          'billed', an, t, t
        FROM (
          SELECT g, t, d, c, st, an, CASE WHEN an IS NOT NULL AND an ->> 'status' = 'completed' THEN 0.0123 ELSE 0 END AS ac
          FROM (
            SELECT g, t, d, c, st,
              CASE WHEN st <> 'completed' OR r2 >= 0.98 THEN NULL
                WHEN r2 >= 0.95 THEN jsonb_build_object('status', 'failed', 'summary', NULL, 'success', NULL, 'success_reason', NULL, 'sentiment', NULL, 'structured_data', NULL,
                  'agent_version', 1 + g % 3, 'analyzed_at', t + interval '10 minutes', 'error', 'the language model failed: timeout')
                ELSE jsonb_build_object('status', 'completed', 'summary', 'The caller asked for a table.',
                  'success', CASE WHEN r2 < 0.6175 THEN to_jsonb(true) WHEN r2 < 0.855 THEN to_jsonb(false) ELSE 'null'::jsonb END,
                  'success_reason', 'Judged against the criteria.',
                  'sentiment', CASE WHEN r3 < 0.5 THEN 'positive' WHEN r3 < 0.85 THEN 'neutral' ELSE 'negative' END,
                  'structured_data', jsonb_build_object('booked', r2 < 0.6175, 'party_size', 1 + g % 8),
                  'agent_version', 1 + g % 3, 'analyzed_at', t + interval '10 minutes', 'error', NULL)
              END AS an
            FROM (
              SELECT g, now() - random() * interval '30 days' AS t, 20 + floor(random() * 400) AS d, round((random() * 2)::numeric, 2) AS c,
                CASE WHEN r1 < 0.8 THEN 'completed' WHEN r1 < 0.95 THEN 'failed' ELSE 'no_answer' END AS st, random() AS r2, random() AS r3
              FROM (SELECT g, random() AS r1 FROM generate_series($2::int, $3::int) g) s0
            ) s1
          ) s2
        ) s`, [orgId, from, Math.min(size, from + CHUNK - 1)]);
    }
    await q(USAGE_ROLLUPS_BACKFILL, [orgId]);
    await q(CALL_ROLLUPS_BACKFILL, [orgId]);
    await q('ANALYZE calls; ANALYZE call_usage_rollups; ANALYZE call_rollups');
    seconds = (performance.now() - started) / 1000;
    await q('INSERT INTO bench_meta VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value', [`analysis_usage_seed_${size}`, seconds]);
  }
  const { rows: [recorded] } = await q('SELECT value FROM bench_meta WHERE key = $1', [`analysis_usage_seed_${size}`]);
  const { rows: [rollups] } = await q('SELECT count(*)::int AS n FROM call_usage_rollups WHERE client_id = $1', [orgId]);
  const { rows: [owner] } = await q('SELECT user_id FROM memberships WHERE client_id = $1 LIMIT 1', [orgId]);
  const apiKey = (await issueApiKey(database.db, orgId, { userId: owner.user_id, name: 'bench', role: 'user' })).key;
  return { orgId, headers: { 'x-api-key': apiKey, 'x-organization-id': orgId }, seed_seconds: Number(((recorded?.value as number) ?? seconds).toFixed(1)), reused: seconds === 0, rollup_rows: rollups.n as number };
}

/**
 * The seeded rollups against the product's: every call of the organization added by `addCallToUsage`
 * (what a call's final report and its analysis leave) into a scratch organization, then both sets
 * compared row by row. Returns the rows that differ (0 when the seeding is the product's).
 */
async function replayCheck(database: Database, orgId: string): Promise<{ rows: number; differing: number }> {
  const q = (text: string, params: unknown[] = []) => database.pool.query(text, params);
  await q("DELETE FROM organizations WHERE name = 'analysis usage replay'");
  const replay = (await provisionOrganization(database.db, { name: 'analysis usage replay' })).organization_id;
  const rows = await database.db.select().from(calls).where(eq(calls.clientId, orgId));
  let next = 0;
  await Promise.all(Array.from({ length: 4 }, async () => {
    while (next < rows.length) await addCallToUsage(database.db, replay, usageOf(rows[next++]!));
  }));
  const columns = `grain, dimension, bucket, agent_id, call_type, status, value, calls, duration_seconds, cost, cost_stt, cost_llm, cost_tts, cost_telephony, cost_platform,
    histogram::text, latency_histogram::text, analysis_judged, analysis_succeeded`;
  const { rows: [{ differing }] } = await q(`SELECT count(*)::int AS differing FROM (
      (SELECT ${columns} FROM call_usage_rollups WHERE client_id = $1 EXCEPT SELECT ${columns} FROM call_usage_rollups WHERE client_id = $2)
      UNION ALL
      (SELECT ${columns} FROM call_usage_rollups WHERE client_id = $2 EXCEPT SELECT ${columns} FROM call_usage_rollups WHERE client_id = $1)) d`, [orgId, replay]);
  const { rows: [{ n }] } = await q('SELECT count(*)::int AS n FROM call_usage_rollups WHERE client_id = $1', [replay]);
  await q('DELETE FROM organizations WHERE id = $1', [replay]);
  return { rows: n, differing };
}

/** The endpoint's series against a count over the calls table: calls, cost and success_rate per day and group, and the totals. */
async function bruteForceCheck(database: Database, baseUrl: string, headers: Record<string, string>, orgId: string, query: string) {
  const report = ((await (await fetch(`${baseUrl}/api/analytics/usage?${query}&metrics=calls,cost,success_rate`, { headers })).json()) as any).data;
  const { rows } = await database.pool.query(`SELECT analysis ->> 'success' AS g, date_bin('1 day', coalesce(start_time, created_at), TIMESTAMPTZ '2000-01-01') AS day,
      count(*)::int AS calls, sum(total_cost)::text AS cost, count(*) FILTER (WHERE analysis ->> 'success' IS NOT NULL)::int AS judged,
      count(*) FILTER (WHERE analysis ->> 'success' = 'true')::int AS succeeded
    FROM calls WHERE client_id = $1 AND status IN ('completed', 'failed', 'busy', 'no_answer', 'canceled')
      AND coalesce(start_time, created_at) >= $2 AND coalesce(start_time, created_at) < $3 GROUP BY 1, 2`, [orgId, report.period.start, report.period.end]);
  const mismatches: string[] = [];
  const expected = new Map(rows.map((r) => [`${r.g}|${new Date(r.day).toISOString()}`, r]));
  let points = 0;
  for (const series of report.series) {
    const g = series.group['analysis.success'];
    for (const point of series.points) {
      const want = expected.get(`${g}|${point.start}`);
      expected.delete(`${g}|${point.start}`);
      const calls = want?.calls ?? 0;
      const cost = Number(want?.cost ?? 0);
      const rate = !want || want.judged === 0 ? 0 : want.succeeded / want.judged;
      points++;
      if (point.calls !== calls || Math.abs(point.cost - cost) > 1e-9 || Math.abs(point.success_rate - rate) > 1e-12) {
        mismatches.push(`${g} ${point.start}: ${JSON.stringify(point)} against calls ${calls} cost ${cost} success_rate ${rate}`);
      }
    }
  }
  for (const key of expected.keys()) mismatches.push(`group and day ${key} has calls but no point`);
  const judged = rows.reduce((s, r) => s + r.judged, 0);
  const succeeded = rows.reduce((s, r) => s + r.succeeded, 0);
  const totalCalls = rows.reduce((s, r) => s + r.calls, 0);
  if (report.totals.calls !== totalCalls) mismatches.push(`totals.calls ${report.totals.calls} against ${totalCalls}`);
  if (Math.abs(report.totals.success_rate - succeeded / judged) > 1e-12) mismatches.push(`totals.success_rate ${report.totals.success_rate} against ${succeeded / judged}`);
  return { groups: report.series.map((s: any) => s.group['analysis.success']), points, calls: totalCalls, success_rate: Number((succeeded / judged).toFixed(4)), mismatches: mismatches.slice(0, 10), mismatch_count: mismatches.length };
}

const previous = (() => { try { return JSON.parse(fs.readFileSync(path.join(import.meta.dirname, 'results', 'analysis-usage.json'), 'utf8')); } catch { return {}; } })();
const result: Record<string, unknown> = {
  ...machine(), database: 'PostgreSQL 15 on the same 2 cores as the server and the load generator, shared with other sessions',
  target: 'p50 < 50 ms over 30 days, flat from 10k calls', sizes: { ...previous.sizes },
};
for (const size of SIZES) {
  const url = await benchDatabase(`analysis_usage_${size}`);
  const database = await openDatabase({ databaseUrl: url, dataDir: '/tmp', poolSize: 4 });
  await runMigrations(database);
  const seeded = await seed(database, size);
  console.log(`${size} calls: seeded in ${seeded.seed_seconds} s${seeded.reused ? ' (earlier run)' : ''}, ${seeded.rollup_rows} rollup rows`);
  const app = await startChild('app', { DATABASE_URL: url, IN_PROCESS_WORKER: 'false' });
  try {
    const end = new Date();
    const start = new Date(end.getTime() - 30 * 86_400_000);
    const period = `granularity=day&start=${start.toISOString()}&end=${end.toISOString()}`;
    const usage = (rest: string) => `${app.url}/api/analytics/usage?${period}&${rest}`;
    const checks = size <= 10_000
      ? { rollups_against_product_replay: await replayCheck(database, seeded.orgId), endpoint_against_calls: await bruteForceCheck(database, app.url, seeded.headers, seeded.orgId, `${period}&group_by=analysis.success`) }
      : undefined;
    if (checks) console.log(JSON.stringify(checks));
    const load_before = await settle(30);
    const entry = {
      calls: size, seed: { seconds: seeded.seed_seconds, reused: seeded.reused }, call_usage_rollups_rows: seeded.rollup_rows, checks, load_before,
      success_day_30d_all_metrics: await sequentialLatency(usage('group_by=analysis.success'), seeded.headers, { requests: 300, warmup: 30 }),
      success_day_30d_success_rate: await sequentialLatency(usage('group_by=analysis.success&metrics=calls,success_rate'), seeded.headers, { requests: 300, warmup: 30 }),
      sentiment_day_30d_success_rate: await sequentialLatency(usage('group_by=analysis.sentiment&metrics=calls,success_rate'), seeded.headers, { requests: 300, warmup: 30 }),
      no_group_day_30d_success_rate: await sequentialLatency(usage('metrics=success_rate'), seeded.headers, { requests: 300, warmup: 30 }),
      concurrent_success_day_30d_all_metrics: await load('group_by=analysis.success, 10 connections', usage('group_by=analysis.success'), seeded.headers, { connections: 10, duration: 8 }),
      load_after: loadAverage(),
    };
    (result.sizes as Record<string, unknown>)[String(size)] = entry;
    console.log(JSON.stringify(entry, null, 2));
    writeResult('analysis-usage', result);
  } finally {
    await app.stop();
    await database.close();
  }
}
console.log(`written ${writeResult('analysis-usage', result)}`);
