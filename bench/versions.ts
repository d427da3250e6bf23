/**
 * What agent versions cost on `PATCH /api/agents/{id}` (issue 32, item 6; extensions.md §12; target
 * under 10 %), on PostgreSQL, the real server in a child process (the audit log on, as in production).
 * Data: one organization with 100 agents made by `POST /api/agents`, each with a 2 KB system prompt
 * (a version keeps the whole configuration, prompt included, so its row is ~3 KB); every PATCH sets
 * `system_prompt` and `temperature` of an agent drawn at random (20 connections on 100 agents: the
 * row lock each change takes is rarely waited for).
 * Baseline: the same PATCH with the version row's insert made a no-op (bench/serve.ts switches it by
 * a message: the agent's update, its version number, audit entry and `agent.updated` stay), in the
 * same server process. One process, alternating 3-second slices, every other round in the opposite
 * order (layers.ts explains why); the cost is the median over the rounds of each slice against its
 * neighbour, in requests per second and in CPU per request of the server and its PostgreSQL backends;
 * a third slice each round runs versions on again, and its difference from the first is the noise floor.
 * A separate bench rather than a slice of layers.ts: layers.json stays comparable with its earlier
 * runs, and this one runs in two minutes. Load averages are recorded. Results: bench/results/versions.json.
 */
import autocannon from 'autocannon';
import { openDatabase, runMigrations } from '../src/db/database.ts';
import { provisionOrganization } from '../src/modules/organizations/service.ts';
import { cpuSince, cpuSnapshot, loadAverage, machine, settle, startChild, writeResult } from './lib.ts';
import { benchDatabase } from './seed.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const CONNECTIONS = 20;
const AGENTS = 100;
const PROMPT = `You are the front desk of Luigi's, an Italian restaurant. ${'Be brief and friendly; confirm names, times and party sizes back to the caller. '.repeat(24)}`.slice(0, 2000);

const url = await benchDatabase('versions');
const databaseName = new URL(url).pathname.slice(1);
const database = await openDatabase({ databaseUrl: url, dataDir: '/tmp', poolSize: 2 });
await runMigrations(database);
// Each run starts from an empty database: the organizations of earlier runs go, their versions with them.
await database.pool.query("DELETE FROM organizations WHERE name LIKE 'versions bench %'");
const org = await provisionOrganization(database.db, { name: `versions bench ${Date.now()}` });
const headers = { 'x-api-key': org.api_key.key, 'x-organization-id': org.organization_id, 'content-type': 'application/json' };

const info = machine();
const server = await startChild('app', { DATABASE_URL: url, BENCH_VERSIONS: 'on' });
const agentIds: string[] = [];
for (let i = 0; i < AGENTS; i++) {
  const res = await fetch(`${server.url}/api/agents`, { method: 'POST', headers, body: JSON.stringify({ agent_name: `Versions bench ${i}`, system_prompt: PROMPT, llm_model: 'gpt-4o-mini' }) });
  if (res.status !== 200) throw new Error(`create agent: ${res.status} ${await res.text()}`);
  agentIds.push(((await res.json()) as { data: { agent_id: string } }).data.agent_id);
}

let edit = 0;
/** PATCHes of a random agent's prompt and temperature for SECONDS. */
async function patchAgents() {
  const result = await autocannon({
    url: server.url, connections: CONNECTIONS, duration: SECONDS,
    requests: [{
      method: 'PATCH', path: `/api/agents/${agentIds[0]}`, headers,
      setupRequest: (req: any) => {
        edit++;
        return { ...req, path: `/api/agents/${agentIds[Math.floor(Math.random() * AGENTS)]}`, body: JSON.stringify({ system_prompt: `${PROMPT.slice(0, 1990)} edit ${edit}`, temperature: (edit % 20) / 10 }) };
      },
    }],
  });
  return { requests_per_second: Math.round(result.requests.average), p50_ms: result.latency.p50, p99_ms: result.latency.p99, non_2xx: result.non2xx, errors: result.errors, requests: result.requests.total };
}

/** Runs one measure and adds the CPU each request cost the server process and its PostgreSQL backends (µs). */
async function measured<R extends { requests: number }>(run: () => Promise<R>): Promise<R & { cpu_us: number }> {
  const before = cpuSnapshot([server.child.pid!], databaseName);
  const result = await run();
  return { ...result, cpu_us: Math.round((cpuSince(before, [server.child.pid!], databaseName) * 1000) / result.requests) };
}
const setVersions = (versions: 'on' | 'off') => new Promise<void>((resolve) => {
  server.child.once('message', () => resolve());
  server.child.send(`versions:${versions}`);
});
const versionRows = async () => Number((await database.pool.query('SELECT count(*)::int AS n FROM agent_versions WHERE client_id = $1', [org.organization_id])).rows[0].n);

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
// `with_versions_again`: a second slice with versions on, each round: the same code twice, so its
// difference from `with_versions` is the measure's noise floor on this machine at that moment.
type Side = 'with_versions' | 'without_versions' | 'with_versions_again';
const samples: Record<Side, number[]> = { with_versions: [], without_versions: [], with_versions_again: [] };
const cpuSamples: Record<Side, number[]> = { with_versions: [], without_versions: [], with_versions_again: [] };
const latencyP99: Record<Side, number[]> = { with_versions: [], without_versions: [], with_versions_again: [] };
const failures: string[] = [];
// Each side checked by what it left: a version row per PATCH with versions on, none with them off.
const rowsMade: Record<Side, { patches: number; version_rows: number }> = {
  with_versions: { patches: 0, version_rows: 0 }, without_versions: { patches: 0, version_rows: 0 }, with_versions_again: { patches: 0, version_rows: 0 },
};
const settled = await settle(60);
try {
  await patchAgents(); // warm-up, versions on
  await new Promise((resolve) => setTimeout(resolve, 1500));
  for (let round = 1; round <= ROUNDS; round++) {
    const order = ['with_versions', 'without_versions', 'with_versions_again'] as const;
    for (const key of round % 2 === 1 ? order : [...order].reverse()) {
      const side = key === 'without_versions' ? 'off' : 'on';
      await setVersions(side);
      const rowsBefore = await versionRows();
      const r = await measured(patchAgents);
      // autocannon stops counting at the slice's end: the PATCHes still in flight finish before the rows are counted and the switch moves.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      rowsMade[key].patches += r.requests - r.non_2xx - r.errors;
      rowsMade[key].version_rows += (await versionRows()) - rowsBefore;
      samples[key].push(r.requests_per_second);
      cpuSamples[key].push(r.cpu_us);
      latencyP99[key].push(r.p99_ms);
      if (r.non_2xx || r.errors) failures.push(`round ${round} versions ${side}: ${r.non_2xx} non-2xx, ${r.errors} errors`);
      console.log(`round ${round} ${key}: ${r.requests_per_second}/s, ${r.cpu_us} µs CPU per PATCH, p99 ${r.p99_ms} ms`);
    }
  }
} finally {
  await server.stop();
}

// Each cost is the median over rounds of one slice against its neighbour measured moments apart.
const costOf = (withIt: Side, without: Side) => Number((1 - median(samples[withIt].map((v, i) => v / samples[without][i]!))).toFixed(3));
const cpuCostOf = (withIt: Side, without: Side) => Number((1 - median(cpuSamples[without].map((v, i) => v / cpuSamples[withIt][i]!))).toFixed(3));
const cost = costOf('with_versions', 'without_versions');
const cpuCost = cpuCostOf('with_versions', 'without_versions');
const medians = (of: Record<Side, number[]>) => Object.fromEntries(Object.entries(of).map(([k, v]) => [k, median(v)]));
const result = {
  ...info, database: 'PostgreSQL 15 on the same 2 cores as the server and the load generator', load_settled: settled, load_after: loadAverage(),
  data: { agents: AGENTS, system_prompt_chars: PROMPT.length, patch: 'system_prompt and temperature of a random agent', audit_log: 'on (both sides)' },
  rounds: ROUNDS, seconds_per_measure: SECONDS, connections: CONNECTIONS,
  requests_per_second_median: medians(samples),
  requests_per_second_samples: samples,
  cpu_us_per_request_median: medians(cpuSamples),
  cpu_us_per_request_samples: cpuSamples,
  p99_ms_median: medians(latencyP99),
  /** 1 - (with / without) per round, the median: the share of PATCH throughput versioning takes. */
  cost_by_requests_per_second: cost,
  /** 1 - (CPU without / CPU with) per round, the median: the same where CPU is what limits it. */
  cost_by_cpu: cpuCost,
  /** The same comparison between two slices of the same code (versions on twice): what the machine's swings alone make of it. */
  noise_floor: { by_requests_per_second: costOf('with_versions_again', 'with_versions'), by_cpu: cpuCostOf('with_versions_again', 'with_versions') },
  rows_made: rowsMade,
  target: 'versioning costs under 10 % of PATCH /api/agents/{id} (cost < 0.10)',
  failures,
};
// A version row per PATCH counted, plus at most one per connection a slice for those in flight at its end (not counted by autocannon).
for (const side of ['with_versions', 'with_versions_again'] as const) {
  const made = rowsMade[side];
  if (made.version_rows < made.patches || made.version_rows > made.patches + CONNECTIONS * ROUNDS) failures.push(`${side}: ${made.patches} PATCHes counted made ${made.version_rows} version rows`);
}
if (rowsMade.without_versions.version_rows !== 0) failures.push(`versions off: ${rowsMade.without_versions.version_rows} version rows were written`);
console.log(JSON.stringify({ requests_per_second_median: result.requests_per_second_median, cpu_us_per_request_median: result.cpu_us_per_request_median, cost, cpuCost, noise_floor: result.noise_floor, rowsMade, failures }));
console.log(`written to ${writeResult('versions', result)}`);
await database.pool.query('DELETE FROM organizations WHERE id = $1', [org.organization_id]);
await database.close();
