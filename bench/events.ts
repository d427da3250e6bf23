/**
 * Events benchmark on PostgreSQL, the real server in a child process (IN_PROCESS_WORKER=false):
 *  - delivery: 10,000 `call.ended` events made by the real final `PATCH /api/calls`, delivered by two
 *    `switchboard worker` processes to a local receiver that verifies every signature with
 *    `standardwebhooks`: deliveries per second, and p50/p99 from commit (the PATCH's answer) to receipt;
 *  - the outbox's cost on the final PATCH: its throughput with one endpoint registered (the event and
 *    its delivery row in the call's transaction) against the same with no endpoint (the event row only),
 *    interleaved rounds, no worker running (target: under 10 % slower).
 * Results: bench/results/events.json. Other sessions share this 2-core machine: the load averages are recorded.
 */
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { openDatabase, runMigrations } from '../src/db/database.ts';
import { provisionOrganization } from '../src/modules/organizations/service.ts';
import { loadAverage, machine, settle, startChild, writeResult } from './lib.ts';
import { benchDatabase } from './seed.ts';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 10_000);
// Many short interleaved rounds: on this shared machine the load moves between rounds, not within a pair.
const ROUND_CALLS = Number(process.env.BENCH_ROUND_CALLS ?? 1_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const CONCURRENCY = 20;

const databaseUrl = await benchDatabase('events');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sbevents-'));
const database = await openDatabase({ databaseUrl, dataDir, poolSize: 4 });
await runMigrations(database);
await database.pool.query('DELETE FROM events; DELETE FROM webhook_endpoints');
const org = await provisionOrganization(database.db, { name: `events bench ${Date.now()}` });
// The benchmark holds every call open before ending them all: lift the concurrency limit (as `org:limits` would).
await database.pool.query('UPDATE organizations SET max_concurrent_calls = 1000000 WHERE id = $1', [org.organization_id]);
const headers = { 'x-api-key': org.api_key.key, 'x-organization-id': org.organization_id, 'content-type': 'application/json' };
// The workers must unseal the endpoints' secrets with the key bench/serve.ts gives the server.
const env = {
  DATABASE_URL: databaseUrl, DATA_DIR: dataDir, IN_PROCESS_WORKER: 'false', ALLOWED_NETWORKS: '127.0.0.1/32', LOG_LEVEL: 'warn',
  JWT_SECRET: 'bench-secret-0123456789-0123456789', ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
};

// The receiver: verifies each request and notes when each call's call.ended arrived.
const secrets: string[] = [];
const received = new Map<string, number>();
let verified = 0;
let refused = 0;
let duplicates = 0;
const receiver = http.createServer(async (req, res) => {
  let body = '';
  for await (const chunk of req) body += chunk;
  const at = performance.now();
  try {
    const event = new Webhook(secrets[0]!).verify(body, req.headers as Record<string, string>) as { type: string; data: { call_sid: string } };
    verified++;
    if (event.type === 'call.ended') {
      if (received.has(event.data.call_sid)) duplicates++;
      else received.set(event.data.call_sid, at);
    }
    res.writeHead(204).end();
  } catch {
    refused++;
    res.writeHead(400).end();
  }
});
await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
function request(base: string, method: string, url: string, body?: unknown): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}${url}`, { method, headers, agent }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

async function pool<T>(items: T[], work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < items.length) await work(items[next++]!);
  }));
}

async function createCalls(base: string, agentId: string, n: number): Promise<string[]> {
  const sids: string[] = [];
  await pool(Array.from({ length: n }, (_, i) => i), async () => {
    const res = await request(base, 'POST', '/api/calls', { agent_id: agentId, call_type: 'inbound', to_number: '+14155550100', status: 'in_progress' });
    if (res.status !== 200) throw new Error(`create call: ${res.status} ${res.body}`);
    sids.push(JSON.parse(res.body).data.call_sid);
  });
  return sids;
}

/** The final reports, CONCURRENCY at a time: calls per second, and when each answer arrived. */
async function endCalls(base: string, sids: string[]): Promise<{ perSecond: number; answeredAt: Map<string, number> }> {
  const answeredAt = new Map<string, number>();
  const started = performance.now();
  await pool(sids, async (sid) => {
    const res = await request(base, 'PATCH', `/api/calls/${sid}`, {
      status: 'completed', end_reason: 'user_hangup', transcript: [{ role: 'user', text: 'Thanks, bye', start_seconds: 1 }],
    });
    if (res.status !== 200) throw new Error(`end call: ${res.status} ${res.body}`);
    answeredAt.set(sid, performance.now());
  });
  return { perSecond: Math.round(sids.length / ((performance.now() - started) / 1000)), answeredAt };
}

function spawnWorker(): ChildProcess {
  return fork(path.join(import.meta.dirname, '..', 'src', 'cli.ts'), ['worker'], { env: { ...process.env, ...env }, stdio: 'ignore' });
}

const result: Record<string, unknown> = {
  ...machine(), database: 'PostgreSQL 15 on the same 2 cores as the server, the workers, the receiver and the load',
  note: 'other helper sessions ran tests and builds on this machine at the same time; see load_before/load_after',
};
result.load_settled = await settle(60);
const app = await startChild('app', env);
try {
  const agentRes = await request(app.url, 'POST', '/api/agents', { agent_name: 'Bench agent' });
  const agentId = JSON.parse(agentRes.body).data.agent_id as string;

  // 1. The outbox's cost on the final PATCH: no endpoint against one endpoint, no worker running.
  const rounds: Array<{ no_endpoint: number; one_endpoint: number }> = [];
  let endpointId: string | undefined;
  for (let round = 0; round < ROUNDS; round++) {
    const pair = { no_endpoint: 0, one_endpoint: 0 };
    for (const withEndpoint of round % 2 === 0 ? [false, true] : [true, false]) {
      if (withEndpoint && !endpointId) {
        const created = JSON.parse((await request(app.url, 'POST', '/api/webhooks', { url: receiverUrl, event_types: ['call.ended'] })).body).data;
        endpointId = created.webhook_id;
        secrets.push(created.secret);
      }
      if (endpointId) await request(app.url, 'PATCH', `/api/webhooks/${endpointId}`, { enabled: withEndpoint });
      const sids = await createCalls(app.url, agentId, ROUND_CALLS);
      const { perSecond } = await endCalls(app.url, sids);
      pair[withEndpoint ? 'one_endpoint' : 'no_endpoint'] = perSecond;
    }
    rounds.push(pair);
    console.log('outbox round', round + 1, pair);
  }
  const ratios = rounds.map((r) => r.one_endpoint / r.no_endpoint).sort((a, b) => a - b);
  const median = ratios[Math.floor(ratios.length / 2)]!;
  result.outbox_cost = {
    final_patch_per_second: rounds, ratio_one_endpoint_over_none: Number(median.toFixed(3)),
    cost_percent: Number(((1 - median) * 100).toFixed(1)), target: 'under 10 %', calls_per_round: ROUND_CALLS, concurrency: CONCURRENCY,
  };
  // The backlog of those rounds is not part of the delivery measure.
  await database.pool.query('DELETE FROM webhook_deliveries');
  received.clear();
  await request(app.url, 'PATCH', `/api/webhooks/${endpointId}`, { enabled: true });

  // 2. Delivery: 10,000 call.ended through two worker processes while the reports arrive.
  const sids = await createCalls(app.url, agentId, EVENTS);
  result.load_before_delivery = loadAverage();
  const workers = [spawnWorker(), spawnWorker()];
  await new Promise((r) => setTimeout(r, 3000)); // the workers start
  const started = performance.now();
  const { perSecond, answeredAt } = await endCalls(app.url, sids);
  const deadline = Date.now() + 15 * 60_000;
  while (received.size < EVENTS && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  const lastReceipt = Math.max(...received.values());
  for (const w of workers) w.kill('SIGTERM');
  const latencies = sids.filter((s) => received.has(s)).map((s) => received.get(s)! - answeredAt.get(s)!).sort((a, b) => a - b);
  const at = (q: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!);
  result.delivery = {
    events: EVENTS, delivered: received.size, duplicates, verified, refused, worker_processes: 2,
    final_patch_per_second: perSecond,
    deliveries_per_second: Math.round(received.size / ((lastReceipt - started) / 1000)),
    commit_to_receipt_ms: { p50: at(0.5), p90: at(0.9), p99: at(0.99), max: at(1) },
    seconds_first_report_to_last_receipt: Number(((lastReceipt - started) / 1000).toFixed(1)),
  };
  console.log('delivery', result.delivery);
} finally {
  await app.stop();
  receiver.closeAllConnections();
  receiver.close();
  agent.destroy();
  await database.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
result.load_after = loadAverage();
console.log(JSON.stringify(result, null, 2));
console.log(`written ${writeResult('events', result)}`);
