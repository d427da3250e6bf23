/**
 * Post-call analysis through the job queue (issue 32, item 6; extensions.md §13), on PostgreSQL: the
 * real server in a child process (IN_PROCESS_WORKER=false) and two `switchboard worker` processes,
 * against the OpenAI-compatible LLM stand-in of the runtime's tests (runtime/test/standins/openai.ts,
 * in this process) answering every chat completion after a fixed 300 ms (firstTokenMs 300, no gap).
 * Data: one organization with credits, an `openai` integration on the stand-in (created and validated
 * through the API), an agent whose analysis has a summary prompt, success criteria and a
 * structured-data schema (the settings of test/helpers/analysis.ts), and BENCH_ANALYSIS_CALLS (default
 * 1,000) ended calls with a 3-turn transcript seeded in SQL (their usage rollups built as the product
 * builds them, since the analysis moves each call's place in them). One bulk rerun
 * (`POST /api/calls/analyze` filtered on the agent) queues an analysis per call.
 * Measures: completed analyses per second (from the first run queued to the last stored), the
 * per-job overhead beyond the model's 300 ms (each worker takes two analyses at a time, so 4 slots:
 * the ceiling is 4 / 0.3 s = 13.3 a second; overhead = slots × seconds / analyses − 300 ms), and the
 * CPU per analysis of the workers and their PostgreSQL backends. Checked: every call has exactly one
 * completed analysis, one ledger entry for it, one `call.analyzed` event, and the model was asked
 * once per call. Baseline: the ceiling above. Load averages are recorded. Results: bench/results/analysis.json.
 */
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { OpenAiStandin } from '../runtime/test/standins/openai.ts';
import { openDatabase, runMigrations } from '../src/db/database.ts';
import { provisionOrganization } from '../src/modules/organizations/service.ts';
import { CreditLedger } from '../src/modules/billing/ledger.ts';
import { cpuSince, cpuSnapshot, loadAverage, machine, settle, startChild, writeResult } from './lib.ts';
import { benchDatabase, CALL_ROLLUPS_BACKFILL, USAGE_ROLLUPS_BACKFILL } from './seed.ts';
import { transaction } from '../src/db/unit-of-work.ts';

const CALLS = Number(process.env.BENCH_ANALYSIS_CALLS ?? 1_000);
const LLM_MS = 300;
const WORKERS = 2;
const SLOTS_PER_WORKER = 2; // CALL_ANALYSIS's concurrency (src/modules/calls/analysis-jobs.ts)
const KEY = 'sk-analysis-bench';
const SCHEMA = {
  type: 'object', required: ['booked', 'party_size'], additionalProperties: false,
  properties: { booked: { type: 'boolean' }, party_size: { type: 'integer', minimum: 1 }, name: { type: 'string' } },
};
const ANALYSIS = { enabled: true, summary_prompt: 'One sentence.', success_criteria: 'A table was booked.', structured_data_schema: SCHEMA };
const TRANSCRIPT = [
  { role: 'agent', text: 'Luigi\'s, how can I help?', start_seconds: 0 },
  { role: 'user', text: 'A table for four tonight at eight, please.', start_seconds: 2 },
  { role: 'agent', text: 'Booked: four people at eight. See you tonight!', start_seconds: 5 },
];
const ANSWER = JSON.stringify({ summary: 'The caller booked a table for four at eight.', success: true, success_reason: 'A booking was made.', sentiment: 'positive', structured_data: { booked: true, party_size: 4 } });

const databaseUrl = await benchDatabase('analysis_jobs');
const databaseName = new URL(databaseUrl).pathname.slice(1);
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sbanalysis-'));
const database = await openDatabase({ databaseUrl, dataDir, poolSize: 4 });
await runMigrations(database);
const q = (text: string, params: unknown[] = []) => database.pool.query(text, params);
// Each run starts from an empty organization; earlier runs' queued jobs go with theirs.
await q("DELETE FROM organizations WHERE name LIKE 'analysis bench %'");
await q("DELETE FROM pgboss.job WHERE name LIKE 'call-analysis%'").catch(() => {});
const org = await provisionOrganization(database.db, { name: `analysis bench ${Date.now()}` });
const orgId = org.organization_id;
await transaction(database.db, (tx) => new CreditLedger(tx).credit(orgId, 'adjustment', `bench-${orgId}`, 1_000_000, 'analysis bench grant'));
const headers = { 'x-api-key': org.api_key.key, 'x-organization-id': orgId, 'content-type': 'application/json' };

const llm = await new OpenAiStandin({ key: KEY, firstTokenMs: LLM_MS, gapMs: 0 }).start();
llm.script.push(...Array.from({ length: CALLS }, () => ({ text: ANSWER })));
// The workers must unseal the integration's credentials with the key bench/serve.ts gives the server, and reach the stand-in.
const env = {
  DATABASE_URL: databaseUrl, DATA_DIR: dataDir, IN_PROCESS_WORKER: 'false', ALLOWED_NETWORKS: '127.0.0.1/32', LOG_LEVEL: 'warn',
  JWT_SECRET: 'bench-secret-0123456789-0123456789', ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
};
const info = machine();
const app = await startChild('app', env);
const api = async (method: string, url: string, body?: unknown) => {
  const res = await fetch(`${app.url}${url}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const json = (await res.json()) as any;
  if (res.status !== 200) throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(json)}`);
  return json.data;
};
const workers: ChildProcess[] = [];
const result: Record<string, unknown> = { ...info, database: 'PostgreSQL 15 on the same 2 cores as the server, the workers and the stand-in, shared with other sessions' };
try {
  const integration = await api('POST', '/api/integrations', { name: 'llm', provider: 'openai', category: 'llm', credentials: { api_key: KEY, base_url: llm.url } });
  const validated = await api('POST', `/api/integrations/${integration.integration_id}/validate`);
  if (validated.status !== 'active') throw new Error(`integration not active: ${JSON.stringify(validated)}`);
  const agent = await api('POST', '/api/agents', { agent_name: 'Analysis bench', llm_provider: 'openai', llm_model: 'gpt-test', analysis: ANALYSIS });

  await q(`INSERT INTO calls (call_sid, client_id, agent_id, agent_name, agent_version, call_type, status, from_number, to_number, recording_enabled,
      start_time, end_time, end_reason, duration_seconds, turn_count, transcript, total_cost, cost_breakdown, billing_status, created_at, updated_at)
    SELECT 'call_' || substr(md5($1 || g::text), 1, 20), $1, $2, 'Analysis bench', 1, 'inbound', 'completed', '+14155550100', '+16285550100', false,
      t, t + interval '60 seconds', 'user_hangup', 60, 3, $3::jsonb, 3.25, '{"stt":0.25,"llm":0.5,"tts":1,"telephony":1.5,"platform":0}'::jsonb, 'billed', t, t
    FROM (SELECT g, now() - interval '1 hour' - g * interval '1 second' AS t FROM generate_series(1, $4::int) g) s`, [orgId, agent.agent_id, JSON.stringify(TRANSCRIPT), CALLS]);
  await q(USAGE_ROLLUPS_BACKFILL, [orgId]);
  await q(CALL_ROLLUPS_BACKFILL, [orgId]);
  await q('ANALYZE calls');

  for (let i = 0; i < WORKERS; i++) workers.push(fork(path.join(import.meta.dirname, '..', 'src', 'cli.ts'), ['worker'], { env: { ...process.env, ...env }, stdio: 'ignore' }));
  await new Promise((r) => setTimeout(r, 5000)); // the workers start
  result.load_settled = await settle(60);
  const cpuBefore = cpuSnapshot(workers.map((w) => w.pid!), databaseName);
  const started = performance.now();
  const { job_id: jobId } = await api('POST', '/api/calls/analyze', { agent_id: agent.agent_id });
  let progress: any;
  const deadline = Date.now() + 20 * 60_000;
  for (;;) {
    progress = await api('GET', `/api/calls/analyze/${jobId}`);
    if ((progress.status === 'completed' && progress.total === CALLS) || Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  const wallSeconds = (performance.now() - started) / 1000;
  const cpuMs = cpuSince(cpuBefore, workers.map((w) => w.pid!), databaseName);
  const loadAfterRun = loadAverage();

  // From the first run queued to the last one stored: the queue's throughput, without the request and the polling around it.
  const { rows: [span] } = await q(`SELECT extract(epoch FROM max(completed_at) - min(created_at))::float8 AS seconds, count(*)::int AS runs,
      count(*) FILTER (WHERE status = 'completed')::int AS completed FROM call_analysis_runs WHERE client_id = $1`, [orgId]);
  const perSecond = span.completed / span.seconds;
  const slots = WORKERS * SLOTS_PER_WORKER;
  const { rows: [check] } = await q(`SELECT
      count(*)::int AS calls,
      count(*) FILTER (WHERE analysis ->> 'status' = 'completed' AND analysis -> 'structured_data' = '{"booked": true, "party_size": 4}'::jsonb)::int AS analyzed,
      count(*) FILTER (WHERE (SELECT count(*) FROM call_analysis_runs r WHERE r.client_id = c.client_id AND r.call_sid = c.call_sid) = 1)::int AS one_run,
      count(*) FILTER (WHERE (SELECT count(*) FROM credit_transactions t WHERE t.client_id = c.client_id AND t.source_id LIKE c.call_sid || '/analysis/%') = 1)::int AS one_ledger_entry,
      count(*) FILTER (WHERE (SELECT count(*) FROM events e WHERE e.client_id = c.client_id AND e.type = 'call.analyzed' AND e.data ->> 'call_sid' = c.call_sid) = 1)::int AS one_event,
      count(*) FILTER (WHERE (cost_breakdown ->> 'analysis')::numeric > 0 AND total_cost = 3.25 + (cost_breakdown ->> 'analysis')::numeric)::int AS charged_on_call
    FROM calls c WHERE client_id = $1`, [orgId]);
  const { rows: [ledger] } = await q(`SELECT count(*)::int AS entries FROM credit_transactions WHERE client_id = $1 AND source_id LIKE '%/analysis/%'`, [orgId]);
  const chats = llm.requests.filter((r) => r.path.endsWith('/v1/chat/completions')).length;
  const failures: string[] = [];
  for (const [name, value] of Object.entries(check)) if (value !== CALLS) failures.push(`${name}: ${value} of ${CALLS}`);
  if (ledger.entries !== CALLS) failures.push(`ledger entries for analyses: ${ledger.entries}, not ${CALLS}`);
  if (chats !== CALLS) failures.push(`the model was asked ${chats} times for ${CALLS} calls`);
  result.analysis = {
    calls: CALLS, worker_processes: WORKERS, slots, llm_latency_ms: LLM_MS,
    bulk_rerun: { job_id: jobId, final_progress: progress },
    analyses_per_second: Number(perSecond.toFixed(2)),
    ceiling_per_second: Number((slots / (LLM_MS / 1000)).toFixed(2)),
    share_of_ceiling: Number((perSecond / (slots / (LLM_MS / 1000))).toFixed(3)),
    per_job_ms: Number(((slots * span.seconds * 1000) / span.completed).toFixed(1)),
    per_job_overhead_ms: Number(((slots * span.seconds * 1000) / span.completed - LLM_MS).toFixed(1)),
    seconds_first_queued_to_last_stored: Number(span.seconds.toFixed(2)),
    seconds_request_to_progress_completed: Number(wallSeconds.toFixed(2)),
    cpu_ms_per_analysis_workers_and_their_postgres: Number((cpuMs / CALLS).toFixed(2)),
    model_requests: chats,
    checks: { ...check, ledger_entries: ledger.entries },
    load_after_run: loadAfterRun,
  };
  result.failures = failures;
  console.log(JSON.stringify(result.analysis, null, 2), failures);
} finally {
  for (const w of workers) w.kill('SIGTERM');
  await Promise.all(workers.map((w) => new Promise((r) => (w.exitCode !== null ? r(null) : w.once('exit', r)))));
  await app.stop();
  await llm.close();
  await database.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
result.load_after = loadAverage();
console.log(`written ${writeResult('analysis', result)}`);
