import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import fc from 'fast-check';
import { runAuthMatrix } from './helpers/auth-matrix.ts';
import { testEnv } from './helpers/env.ts';
import { asRole, createAgent, createOrg, type TestOrg } from './helpers/fixtures.ts';
import { createCall, patchCall } from './helpers/calls.ts';
import { setConcurrencyLimit } from './helpers/limits.ts';

/**
 * GET /api/analytics/usage (extensions.md §5) against a brute force over the raw calls written here
 * from the contract's words: every call that ended counts once, in the bucket of its start (its
 * creation when it never started), buckets computed with Intl in the zone; sums exact to the
 * credit's four decimals; percentiles (nearest rank) within 5%.
 */

runAuthMatrix({ method: 'GET', route: '/api/analytics/usage', path: () => '/api/analytics/usage?granularity=hour&start=2026-03-01T00:00:00Z&end=2026-03-02T00:00:00Z', permission: 'analytics:read' });

interface Made {
  call_sid: string; at: number; agent_id: string; call_type: string; status: string; end_reason: string | null; phone_number: string | null;
  campaign_id: string | null; metadata: Record<string, unknown>; duration: number; cost: number; parts: Record<string, number>; ended: boolean;
}

const PARTS = ['stt', 'llm', 'tts', 'telephony', 'platform'] as const;
const NUMBERS = ['+14155550100', '+14155550111', '+14155550122'];
const SUMMED = ['calls', 'duration_seconds', 'cost', 'cost_stt', 'cost_llm', 'cost_tts', 'cost_telephony', 'cost_platform'] as const;
const scaled = (n: number) => Math.round(n * 10_000);

let org: TestOrg;
let agents: string[] = [];
const made: Made[] = [];

function rng(seed: number) {
  let s = seed;
  return () => ((s = (s * 48271) % 2147483647) / 2147483647);
}

// ---- the brute force: buckets by Intl, independently of the server's period code ----

const parts = (t: number, tz: string) => {
  const p: Record<string, string> = {};
  for (const x of new Intl.DateTimeFormat('en-US', { timeZone: tz, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' }).formatToParts(t)) p[x.type] = x.value;
  return p;
};
const localDay = (t: number, tz: string) => { const p = parts(t, tz); return `${p.year}-${p.month}-${p.day}`; };
const dayPlus = (day: string, n: number) => new Date(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);

/** The name of the bucket an instant falls in: minutes and hours by their first instant, days, weeks (from Monday) and months by their local date. */
function bucketName(t: number, granularity: string, tz: string): string {
  if (granularity === 'minute') return new Date(Math.floor(t / 60_000) * 60_000).toISOString();
  if (granularity === 'hour') {
    // The latest instant at or before t where the zone's clock shows a whole hour.
    for (let q = Math.floor(t / 900_000) * 900_000; ; q -= 900_000) {
      const p = parts(q, tz);
      if (p.minute === '00' && p.second === '00') return new Date(q).toISOString();
    }
  }
  const day = localDay(t, tz);
  if (granularity === 'day') return day;
  if (granularity === 'week') return dayPlus(day, -((new Date(`${day}T00:00:00Z`).getUTCDay() + 6) % 7));
  return day.slice(0, 7);
}

const nearestRank = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(1, Math.ceil(p * sorted.length)) - 1]!;
};

const groupValue = (call: Made, groupBy: string | undefined): string | null => {
  if (!groupBy) return null;
  if (groupBy.startsWith('metadata.')) {
    const v = call.metadata[groupBy.slice(9)];
    return v === undefined || v === null ? null : typeof v === 'string' ? v : JSON.stringify(v);
  }
  return ({ agent: call.agent_id, phone_number: call.phone_number, status: call.status, end_reason: call.end_reason, call_type: call.call_type, campaign: call.campaign_id } as Record<string, string | null>)[groupBy]!;
};
const GROUP_FIELD: Record<string, string> = { agent: 'agent_id', phone_number: 'phone_number', status: 'status', end_reason: 'end_reason', call_type: 'call_type', campaign: 'campaign_id' };

async function usage(params: Record<string, string>, as: TestOrg = org) {
  const { app } = await testEnv();
  return app.inject({ url: `/api/analytics/usage?${new URLSearchParams(params)}`, headers: asRole(as, 'user') });
}

/** Checks one report against the brute force over `made`. */
async function check(params: Record<string, string>) {
  const res = await usage(params);
  assert.equal(res.statusCode, 200, `${JSON.stringify(params)}: ${res.body}`);
  const report = res.json().data;
  const { granularity, timezone: tz } = report;
  const label = JSON.stringify(params);
  const start = Date.parse(report.period.start);
  const end = Date.parse(report.period.end);
  // The period is whole buckets holding the asked start and the instant before the asked end.
  assert.equal(bucketName(start, granularity, tz), bucketName(Date.parse(params.start!), granularity, tz), label);
  assert.equal(bucketName(end - 1, granularity, tz), bucketName(Date.parse(params.end!) - 1, granularity, tz), label);
  assert.notEqual(bucketName(end, granularity, tz), bucketName(end - 1, granularity, tz), label);
  const counted = made.filter((c) => c.ended && c.at >= start && c.at < end
    && (!params.agent_id || c.agent_id === params.agent_id) && (!params.call_type || c.call_type === params.call_type) && (!params.status || c.status === params.status));
  assert.ok(counted.length > 0, `${label}: the seed has calls in the period`);
  const metrics = params.metrics ? params.metrics.split(',') : ['calls', 'duration_seconds', 'duration_p50', 'duration_p95', 'latency_p50', 'latency_p95', 'cost', ...PARTS.map((p) => `cost_${p}`), 'success_rate'];

  const expectedGroups = new Set(counted.map((c) => groupValue(c, params.group_by)));
  assert.equal(report.series.length, expectedGroups.size, label);
  const totals = Object.fromEntries(SUMMED.map((m) => [m, 0])) as Record<string, number>;
  for (const series of report.series) {
    const value = series.group === null ? null : series.group[GROUP_FIELD[params.group_by!] ?? params.group_by!];
    if (!params.group_by) assert.equal(series.group, null);
    assert.ok(expectedGroups.has(value), `${label}: group ${value}`);
    const mine = counted.filter((c) => groupValue(c, params.group_by) === value);
    // Every bucket, in order, each once.
    const names = series.points.map((p: { start: string }) => bucketName(Date.parse(p.start), granularity, tz));
    assert.equal(new Set(names).size, names.length, label);
    assert.equal(names[0], bucketName(start, granularity, tz));
    for (let i = 1; i < series.points.length; i++) {
      assert.equal(bucketName(Date.parse(series.points[i].start) - 1, granularity, tz), names[i - 1], `${label}: buckets are contiguous`);
    }
    for (const point of series.points) {
      assert.deepEqual(Object.keys(point).sort(), ['start', ...metrics].sort(), label);
      const name = bucketName(Date.parse(point.start), granularity, tz);
      const inside = mine.filter((c) => bucketName(c.at, granularity, tz) === name);
      const want: Record<string, number> = {
        calls: inside.length, duration_seconds: inside.reduce((s, c) => s + c.duration, 0), cost: inside.reduce((s, c) => s + scaled(c.cost), 0) / 10_000,
        ...Object.fromEntries(PARTS.map((p) => [`cost_${p}`, inside.reduce((s, c) => s + scaled(c.parts[p] ?? 0), 0) / 10_000])),
        // These calls report no agent-turn latency (test/usage-latency.test.ts checks the latency percentiles).
        latency_p50: 0, latency_p95: 0,
        // Nor analyses (test/call-analysis-usage.test.ts checks success_rate): none judged, 0.
        success_rate: 0,
      };
      for (const m of metrics) {
        if (m.startsWith('duration_p')) {
          const exact = inside.length === 0 ? 0 : nearestRank(inside.map((c) => c.duration), m === 'duration_p50' ? 0.5 : 0.95);
          assert.ok(Math.abs(point[m] - exact) <= 0.05 * exact + 1e-9, `${label} ${point.start} ${m}: ${point[m]} vs ${exact}`);
        } else if (m === 'duration_seconds') {
          assert.ok(Math.abs(point[m] - want[m]!) < 1e-3, `${label} ${point.start} ${m}: ${point[m]} vs ${want[m]}`);
        } else {
          assert.equal(point[m], want[m], `${label} ${point.start} ${m}`);
        }
        if (SUMMED.includes(m as never)) totals[m] += scaled(point[m]);
      }
    }
    assert.equal(series.points.reduce((n: number, p: { calls?: number }) => n + (p.calls ?? 0), 0), metrics.includes('calls') ? mine.length : 0, label);
  }
  // Totals: the sum over the calls, and exactly the sum of the groups' points.
  for (const m of metrics) {
    if (m.startsWith('latency_p') || m === 'success_rate') {
      assert.equal(report.totals[m], 0, `${label} totals ${m}: no call reported a turn latency, none was analyzed`);
      continue;
    }
    if (!SUMMED.includes(m as never)) {
      const exact = nearestRank(counted.map((c) => c.duration), m === 'duration_p50' ? 0.5 : 0.95);
      assert.ok(Math.abs(report.totals[m] - exact) <= 0.05 * exact + 1e-9, `${label} totals ${m}: ${report.totals[m]} vs ${exact}`);
      continue;
    }
    assert.equal(scaled(report.totals[m]), totals[m], `${label}: the groups add up to totals.${m}`);
  }
  if (metrics.includes('cost')) assert.equal(report.totals.cost, counted.reduce((s, c) => s + scaled(c.cost), 0) / 10_000, `${label}: totals.cost`);
  if (metrics.includes('calls')) assert.equal(report.totals.calls, counted.length, label);
  return report;
}

before(async () => {
  const { database } = await testEnv();
  org = await createOrg();
  await setConcurrencyLimit(org.orgId, 100_000);
  agents = [(await createAgent(org)).agent_id, (await createAgent(org)).agent_id, (await createAgent(org)).agent_id];
  const random = rng(5);
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
  // Starts over five weeks around the spring DST changes (New York 03-08, Berlin 03-29, Lord Howe 04-05),
  // dense on the morning of 2026-03-08 for the minute series; some calls never start (they count at creation).
  const starts: Array<number | null> = [];
  for (let i = 0; i < 130; i++) starts.push(Date.parse('2026-03-01T00:00:00Z') + Math.floor(random() * 38 * 86_400_000));
  for (let i = 0; i < 30; i++) starts.push(Date.parse('2026-03-08T05:00:00Z') + Math.floor(random() * 4 * 3_600_000));
  for (let i = 0; i < 12; i++) starts.push(null);
  for (const at of starts) {
    const call_type = pick(['inbound', 'outbound']);
    const metadata: Record<string, unknown> = {};
    if (random() < 0.7) metadata.customer_id = pick(['cust-1', 'cust-2', 'cust-3']);
    if (random() < 0.3) metadata.tier = pick(['gold', 1]);
    const to = pick(NUMBERS);
    const from = pick(NUMBERS);
    const created = await createCall(org, pick(agents), { call_type, to_number: to, from_number: from, metadata, ...(at === null ? {} : { start_time: new Date(at).toISOString() }) });
    const campaign_id = random() < 0.3 ? pick(['cmp_a', 'cmp_b']) : null;
    if (campaign_id) await database.pool.query('UPDATE calls SET campaign_id = $3 WHERE client_id = $1 AND call_sid = $2', [org.orgId, created.call_sid, campaign_id]);
    const ended = random() < 0.9;
    const status = ended ? pick(['completed', 'completed', 'failed', 'no_answer', 'busy']) : 'in_progress';
    const report: Record<string, unknown> = { status };
    if (ended) report.end_reason = pick(['user_hangup', 'agent_hangup', 'error', undefined]);
    const duration = ended && random() < 0.9 ? Math.round(random() * random() * 60_000) / 10 : undefined;
    if (duration !== undefined) report.duration_seconds = duration;
    let cost = 0;
    const partsOf: Record<string, number> = {};
    if (random() < 0.6) {
      for (const p of PARTS) partsOf[p] = Math.round(random() * 10_000) / 10_000;
      report.cost_breakdown = partsOf;
      cost = PARTS.reduce((s, p) => s + scaled(partsOf[p]!), 0) / 10_000;
    } else if (random() < 0.7) {
      cost = Math.round(random() * 50_000) / 10_000;
      report.total_cost = cost;
    }
    if (at !== null && ended) report.end_time = new Date(at + 1000).toISOString();
    const res = await patchCall(org, created.call_sid, report);
    assert.equal(res.statusCode, 200, res.body);
    const call = res.json().data;
    made.push({
      call_sid: call.call_sid, at: Date.parse(call.start_time ?? call.created_at), agent_id: call.agent_id, call_type, status: call.status,
      end_reason: call.end_reason, phone_number: call_type === 'outbound' ? from : to, campaign_id, metadata, duration: call.duration_seconds ?? 0,
      cost: call.total_cost ?? 0, parts: call.cost_breakdown ?? {}, ended,
    });
  }
  // Another organization's calls in the same hours: never counted here.
  const other = await createOrg();
  const theirs = await createCall(other, (await createAgent(other)).agent_id, { start_time: '2026-03-08T06:00:00Z' });
  await patchCall(other, theirs.call_sid, { status: 'completed', total_cost: 99, duration_seconds: 99 });
});

describe('usage analytics against the brute force over the calls', () => {
  test('every granularity, group_by and zone: buckets present and contiguous, sums exact, groups add up to totals, percentiles within 5%', async () => {
    const now = Date.now();
    const cases: Array<Record<string, string>> = [
      { granularity: 'day', start: '2026-03-01T00:00:00Z', end: '2026-04-08T00:00:00Z' },
      { granularity: 'day', timezone: 'America/New_York', start: '2026-03-03T10:00:00Z', end: '2026-04-02T17:30:00Z', group_by: 'agent' },
      { granularity: 'hour', timezone: 'Europe/Berlin', start: '2026-03-27T13:20:00Z', end: '2026-03-31T00:00:00Z', group_by: 'status' },
      { granularity: 'hour', timezone: 'Australia/Lord_Howe', start: '2026-04-03T00:00:00Z', end: '2026-04-07T00:00:00Z', group_by: 'end_reason' },
      { granularity: 'hour', timezone: 'Asia/Kolkata', start: '2026-03-07T00:00:00Z', end: '2026-03-10T00:00:00Z', group_by: 'phone_number' },
      { granularity: 'minute', start: '2026-03-08T05:00:30Z', end: '2026-03-08T09:00:00Z', group_by: 'call_type' },
      { granularity: 'week', timezone: 'Asia/Kathmandu', start: '2026-03-01T00:00:00Z', end: '2026-04-08T00:00:00Z', group_by: 'campaign' },
      { granularity: 'month', timezone: 'Pacific/Chatham', start: '2026-02-10T00:00:00Z', end: '2026-04-20T00:00:00Z', group_by: 'metadata.customer_id' },
      { granularity: 'day', start: '2026-03-01T00:00:00Z', end: '2026-04-08T00:00:00Z', group_by: 'phone_number', agent_id: agents[0]!, metrics: 'cost,calls,duration_p95' },
      { granularity: 'week', start: '2026-03-01T00:00:00Z', end: '2026-04-08T00:00:00Z', group_by: 'metadata.tier', status: 'completed', call_type: 'outbound' },
      { granularity: 'day', timezone: 'America/Los_Angeles', start: '2026-03-01T00:00:00Z', end: '2026-04-08T00:00:00Z', group_by: 'metadata.customer_id', metrics: 'duration_p50,cost_llm' },
      { granularity: 'hour', start: new Date(now - 3 * 3_600_000).toISOString(), end: new Date(now + 3_600_000).toISOString(), group_by: 'status' },
    ];
    for (const params of cases) await check(params);
  });

  test('periods beyond a granularity\'s limit, an end not after start, bad zones, groups and metrics are 400', async () => {
    const bad: Array<Record<string, string>> = [
      { granularity: 'minute', start: '2026-03-01T00:00:00Z', end: '2026-03-03T00:00:01Z' },
      { granularity: 'hour', start: '2026-03-01T00:00:00Z', end: '2026-04-01T00:00:01Z' },
      { granularity: 'day', start: '2026-01-01T00:00:00Z', end: '2027-01-02T00:00:01Z' },
      { granularity: 'month', start: '2020-01-01T00:00:00Z', end: '2025-01-15T00:00:00Z' },
      { granularity: 'week', start: '2020-01-01T00:00:00Z', end: '2025-01-15T00:00:00Z' },
      { granularity: 'day', start: '2026-03-02T00:00:00Z', end: '2026-03-02T00:00:00Z' },
      { granularity: 'day', start: '2026-03-02T00:00:00Z', end: '2026-03-01T00:00:00Z' },
      { timezone: 'Mars/Olympus' }, { group_by: 'weather' }, { group_by: 'metadata.' }, { metrics: 'calls,profit' }, { metrics: '' },
      { granularity: 'year' }, { status: 'bored' }, { start: 'yesterday' }, { extra: '1' },
    ];
    for (const params of bad) {
      const res = await usage(params);
      assert.equal(res.statusCode, 400, `${JSON.stringify(params)}: ${res.body}`);
      assert.equal(res.json().code, 'validation_error');
    }
    // The longest periods are allowed.
    for (const [granularity, ms] of [['minute', 48 * 3_600_000], ['hour', 31 * 86_400_000], ['day', 366 * 86_400_000]] as const) {
      assert.equal((await usage({ granularity, start: '2026-01-01T00:00:00Z', end: new Date(Date.parse('2026-01-01T00:00:00Z') + ms).toISOString() })).statusCode, 200, granularity);
    }
    // Defaults: the last 30 days per day, in UTC, every metric.
    const plain = (await usage({})).json().data;
    assert.equal(plain.granularity, 'day');
    assert.equal(plain.timezone, 'UTC');
    assert.ok(plain.series[0].points.length === 31 || plain.series[0].points.length === 30);
    assert.equal(Object.keys(plain.totals).length, 13);
  });

  test('any query parameters: never a server error; a 200 always has one point per bucket in every series', async () => {
    const zones = ['UTC', 'Asia/Kathmandu', 'America/St_Johns', 'Pacific/Kiritimati', 'Etc/GMT+12', 'Europe/Dublin', 'utc', 'X', ''];
    const instant = fc.oneof(
      fc.date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true }).map((d) => d.toISOString()),
      fc.date({ min: new Date('2026-01-01T00:00:00Z'), max: new Date('2026-12-31T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString()),
      fc.constantFrom('0001-01-01T00:00:00Z', '9999-12-31T23:59:59.999Z', '2026-03-08T07:00:00+05:45', 'x', '2026-02-30T00:00:00Z'),
    );
    await fc.assert(fc.asyncProperty(
      fc.record({
        granularity: fc.constantFrom('minute', 'hour', 'day', 'week', 'month', 'decade'), timezone: fc.constantFrom(...zones),
        start: instant, end: instant,
        group_by: fc.constantFrom('agent', 'phone_number', 'status', 'end_reason', 'call_type', 'campaign', 'metadata.customer_id', 'metadata.\u0000', 'metadata.é\'"', 'x'),
        metrics: fc.constantFrom('calls', 'duration_p95,cost', 'cost_tts,cost_tts', 'nope'),
        status: fc.constantFrom('completed', 'queued', 'x'),
      }, { requiredKeys: [] }),
      async (params) => {
        const res = await usage(params as Record<string, string>);
        assert.ok(res.statusCode === 200 || res.statusCode === 400, `${JSON.stringify(params)}: ${res.statusCode} ${res.body}`);
        if (res.statusCode === 200) {
          const { series } = res.json().data;
          assert.ok(series.every((s: { points: unknown[] }) => s.points.length === series[0].points.length));
        }
      },
    ), { numRuns: 200, seed: 18 });
  });
});
