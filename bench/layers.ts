/**
 * What the idempotency and audit layers cost (issue 19, item 8; target: each under 10 %), on
 * PostgreSQL with 1,000 calls per organization, the real server in a child process:
 *  - `GET /api/calls?limit=20` with the audit log on and off (neither layer acts on a read: the
 *    idempotency hook returns on the method, nothing is audited; this shows it costs nothing);
 *  - `POST /api/agents` (a write in one transaction) with a fresh `Idempotency-Key` on every request
 *    against the same request with the UUID in a header the server ignores (the layer's kept response), and with audit entries written against
 *    `AuditService.record` made a no-op (bench/serve.ts switches it between measures).
 * One server process, measured in alternating 3-second slices; the median of each comparison over
 * the rounds is reported. Results: bench/results/layers.json.
 */
import { randomUUID } from 'node:crypto';
import autocannon from 'autocannon';
import { issueApiKey } from '../src/modules/api-keys/service.ts';
import { cpuSince, cpuSnapshot, load, loadAverage, machine, medianInterval95, settle, startChild, writeResult } from './lib.ts';
import { benchDatabase, seededCalls } from './seed.ts';
import { sequentialPairs, type PairsResult, type SequentialRequest } from './sequential-pairs.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const CONNECTIONS = 20;
/** The sequential measure's pairs of slices, and requests per slice (bench/sequential-pairs.ts). */
const PAIRS = Number(process.env.BENCH_PAIRS ?? 250);
const PER_SLICE = 40;

const url = await benchDatabase('calls');
const seeded = await seededCalls({ url, perOrg: 1000 });
const { rows: [owner] } = await seeded.database.pool.query('SELECT user_id FROM memberships WHERE client_id = $1 LIMIT 1', [seeded.orgId]);
const adminKey = (await issueApiKey(seeded.database.db, seeded.orgId, { userId: owner.user_id, name: 'bench admin', role: 'admin' })).key;
const writer = { 'x-api-key': adminKey, 'x-organization-id': seeded.orgId, 'content-type': 'application/json' };

/**
 * POSTs of a new agent for SECONDS, each request with a fresh UUID in a header: with `idempotent`
 * as its `Idempotency-Key`, without it in `X-Bench-Nonce`, which the server ignores. Both sides cost
 * the load generator the same (autocannon serializes every request anew once it has a
 * `setupRequest`), so the comparison prices the layer, not the generator: on the two cores it
 * shares with the server and PostgreSQL, the per-request serialization alone took about 5 % of the
 * POSTs' rate (2026-11-29, profiled). `fresh: false` sends the same bytes every time: the audit-off
 * slices measure it too, so every run shows what the generator's work alone costs.
 */
async function postAgents(base: string, idempotent: boolean, fresh = true) {
  const header = idempotent ? 'idempotency-key' : 'x-bench-nonce';
  const result = await autocannon({
    url: base, connections: CONNECTIONS, duration: SECONDS,
    requests: [{
      method: 'POST', path: '/api/agents', headers: writer, body: JSON.stringify({ agent_name: 'Layer bench' }),
      ...(fresh ? { setupRequest: (req: any) => ({ ...req, headers: { ...req.headers, [header]: randomUUID() } }) } : {}),
    }],
  });
  return { requests_per_second: Math.round(result.requests.average), p99_ms: result.latency.p99, non_2xx: result.non2xx, errors: result.errors, requests: result.requests.total };
}

const databaseName = new URL(url).pathname.slice(1);
/** Runs one measure and adds the CPU each request cost the server process and its PostgreSQL backends (µs). */
async function measured<R extends { requests: number }>(server: { child: { pid?: number } }, run: () => Promise<R>): Promise<R & { cpu_us: number }> {
  const before = cpuSnapshot([server.child.pid!], databaseName);
  const result = await run();
  return { ...result, cpu_us: Math.round((cpuSince(before, [server.child.pid!], databaseName) * 1000) / result.requests) };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const info = machine();
const settled = await settle(60);
const samples: Record<string, number[]> = {};
const note = (name: string, value: number) => (samples[name] ??= []).push(value);
const cpuSamples: Record<string, number[]> = {};
const noteCpu = (name: string, value: number) => (cpuSamples[name] ??= []).push(value);
const failures: string[] = [];
const sequential: Record<string, PairsResult> = {};

// One server process runs every measure, the audit log switched on and off between slices: two
// processes side by side differed by up to 13 % on the same GET (the code identical, each its own
// JIT state and place on the cores). Slices alternate, and every other round runs the audit
// settings, and the two POSTs, in the opposite order: a slice inherits the tail of the one before
// it (autovacuum after a burst of inserts, checkpoints), and a fixed order charged it to the same
// measure every round.
const server = await startChild('app', { DATABASE_URL: url, BENCH_AUDIT: 'on' });
const setAudit = (audit: 'on' | 'off') => new Promise<void>((resolve) => {
  server.child.once('message', () => resolve());
  server.child.send(`audit:${audit}`);
});
try {
  await load('warm-up', `${server.url}/api/calls?limit=20`, seeded.headers, { duration: 2 });
  await postAgents(server.url, false);
  for (let round = 1; round <= ROUNDS; round++) {
    const forward = round % 2 === 1;
    for (const audit of forward ? (['on', 'off'] as const) : (['off', 'on'] as const)) {
      await setAudit(audit);
      const list = await measured(server, () => load('GET /api/calls', `${server.url}/api/calls?limit=20`, seeded.headers, { connections: CONNECTIONS, duration: SECONDS }));
      const post = (idempotent: boolean) => measured(server, () => postAgents(server.url, idempotent));
      let plain, keyed;
      if (forward) {
        plain = await post(false);
        keyed = await post(true);
      } else {
        keyed = await post(true);
        plain = await post(false);
      }
      // The generator's control (audit off only, to keep the run short): the plain POST sent as the same bytes every time.
      const repeated = audit === 'off' ? await measured(server, () => postAgents(server.url, false, false)) : undefined;
      if (repeated) {
        note('post_audit_off_repeated_bytes', repeated.requests_per_second);
        noteCpu('post_audit_off_repeated_bytes', repeated.cpu_us);
      }
      for (const [name, r] of [[`get_audit_${audit}`, list], [`post_audit_${audit}`, plain], [`post_audit_${audit}_idempotent`, keyed]] as const) {
        note(name, r.requests_per_second);
        noteCpu(name, r.cpu_us);
      }
      for (const [what, r] of [['GET', list], ['POST', plain], ['POST idempotent', keyed]] as const) {
        if (r.non_2xx || r.errors) failures.push(`round ${round} audit ${audit} ${what}: ${r.non_2xx} non-2xx, ${r.errors} errors`);
      }
      console.log(`round ${round} audit ${audit}: GET ${list.requests_per_second}/s ${list.cpu_us} µs, POST ${plain.requests_per_second}/s ${plain.cpu_us} µs, POST with a key ${keyed.requests_per_second}/s ${keyed.cpu_us} µs${repeated ? `, POST as repeated bytes ${repeated.requests_per_second}/s ${repeated.cpu_us} µs` : ''}`);
    }
  }
  // The same costs measured precisely (bench/sequential-pairs.ts): one request at a time, CPU in
  // nanoseconds, hundreds of alternating pairs; and the method's floor, the same request both sides.
  const agentRequest = (header: string): SequentialRequest => ({
    method: 'POST', path: '/api/agents', headers: { ...writer, [header]: randomUUID() }, body: JSON.stringify({ agent_name: 'Layer bench' }),
  });
  const pairs = (request: (side: 'a' | 'b') => SequentialRequest, beforeSlice?: (side: 'a' | 'b') => Promise<void>) =>
    sequentialPairs({ base: server.url, pid: server.child.pid!, database: databaseName, pairs: PAIRS, perSlice: PER_SLICE, request, beforeSlice });
  const keyedOrNot = (side: 'a' | 'b') => agentRequest(side === 'a' ? 'x-bench-nonce' : 'idempotency-key');
  for (const audit of ['off', 'on'] as const) {
    await setAudit(audit);
    sequential[`idempotency_on_post_audit_${audit}`] = await pairs(keyedOrNot);
    console.log(`sequential, audit ${audit}: idempotency ${JSON.stringify(sequential[`idempotency_on_post_audit_${audit}`])}`);
  }
  sequential.audit_on_post = await pairs(() => agentRequest('x-bench-nonce'), (side) => setAudit(side === 'a' ? 'off' : 'on'));
  await setAudit('on');
  sequential.floor_same_request = await pairs(() => agentRequest('x-bench-nonce'));
  console.log(`sequential: audit ${JSON.stringify(sequential.audit_on_post)}, floor ${JSON.stringify(sequential.floor_same_request)}`);
} finally {
  await server.stop();
}
// Remove the agents the writes made, so the next run starts from the same database.
await seeded.database.pool.query("DELETE FROM agents WHERE client_id = $1 AND agent_name = 'Layer bench'", [seeded.orgId]);
await seeded.database.pool.query('DELETE FROM idempotency_keys WHERE client_id = $1', [seeded.orgId]);
// And vacuum what the deletes left: autovacuum may be off (it is on the machines these figures were
// measured on), and tens of thousands of dead agents, versions and keys slowed the next run's POSTs.
await seeded.database.pool.query('VACUUM agents, agent_versions, idempotency_keys, events, audit_logs');

const m = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)]));
// Each cost is the median over rounds of one slice against its neighbour measured moments apart:
// the machine's load swings more between rounds than between the two slices of one round.
const costs = (withLayer: string, without: string) => samples[withLayer]!.map((v, i) => 1 - v / samples[without]![i]!);
const cost = (withLayer: string, without: string) => Number(median(costs(withLayer, without)).toFixed(3));
// The same comparison in CPU per request (server process and its PostgreSQL backends): the share of
// throughput a layer takes from a machine that does nothing else, which requests per second on this
// shared machine only approach.
const cpuCosts = (withLayer: string, without: string) => cpuSamples[without]!.map((v, i) => 1 - v / cpuSamples[withLayer]![i]!);
const cpuCost = (withLayer: string, without: string) => Number(median(cpuCosts(withLayer, without)).toFixed(3));
/** How far the rounds' spread lets each concurrent cost's median move (bench/lib.ts medianInterval95). */
const interval = (values: number[]) => medianInterval95(values).map((v) => Number(v.toFixed(3)));
const result = {
  ...info, load_settled: settled, load_after: loadAverage(), rounds: ROUNDS, seconds_per_measure: SECONDS, connections: CONNECTIONS,
  requests_per_second_median: m,
  samples,
  cpu_us_per_request_median: Object.fromEntries(Object.entries(cpuSamples).map(([k, v]) => [k, median(v)])),
  cpu_us_per_request_samples: cpuSamples,
  cost: {
    idempotency_on_post: cost('post_audit_off_idempotent', 'post_audit_off'),
    idempotency_on_post_with_audit: cost('post_audit_on_idempotent', 'post_audit_on'),
    audit_on_post: cost('post_audit_on', 'post_audit_off'),
    // The same code path on both servers (neither layer acts on a read): the measure's noise floor.
    layers_on_get: cost('get_audit_on', 'get_audit_off'),
    // Not a layer: a fresh header per request against the same bytes every time, the generator's own work.
    load_generator_fresh_header: cost('post_audit_off', 'post_audit_off_repeated_bytes'),
  },
  /** 1 - (CPU per request without the layer) / (with it): the throughput a layer costs where CPU is what limits it. */
  cost_by_cpu: {
    idempotency_on_post: cpuCost('post_audit_off_idempotent', 'post_audit_off'),
    idempotency_on_post_with_audit: cpuCost('post_audit_on_idempotent', 'post_audit_on'),
    audit_on_post: cpuCost('post_audit_on', 'post_audit_off'),
    layers_on_get: cpuCost('get_audit_on', 'get_audit_off'),
    load_generator_fresh_header: cpuCost('post_audit_off', 'post_audit_off_repeated_bytes'),
  },
  /** 95 % intervals of the concurrent costs' medians over the rounds, by rate and by CPU. */
  cost_interval_95: {
    idempotency_on_post: { by_rate: interval(costs('post_audit_off_idempotent', 'post_audit_off')), by_cpu: interval(cpuCosts('post_audit_off_idempotent', 'post_audit_off')) },
    audit_on_post: { by_rate: interval(costs('post_audit_on', 'post_audit_off')), by_cpu: interval(cpuCosts('post_audit_on', 'post_audit_off')) },
    layers_on_get: { by_rate: interval(costs('get_audit_on', 'get_audit_off')), by_cpu: interval(cpuCosts('get_audit_on', 'get_audit_off')) },
  },
  /**
   * The precise measure: one request at a time, alternating slices of PER_SLICE requests, CPU per
   * request (server threads and PostgreSQL backends, schedstat ns); cost = median over PAIRS pairs of
   * 1 - without / with. `floor_same_request` is the same request on both sides.
   */
  sequential_cpu: sequential,
  target: 'each layer costs under 10 % (cost < 0.10)',
  failures,
};
console.log(JSON.stringify({ cost: result.cost, cost_by_cpu: result.cost_by_cpu, sequential_cpu: Object.fromEntries(Object.entries(sequential).map(([k, v]) => [k, v.cost])) }));
console.log(`written to ${writeResult('layers', result)}`);
await seeded.database.close();
