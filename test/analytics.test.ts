import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { runAuthMatrix } from './helpers/auth-matrix.ts';
import { testEnv } from './helpers/env.ts';
import { asRole, createAgent, createOrg, type TestOrg } from './helpers/fixtures.ts';
import { createCall, patchCall } from './helpers/calls.ts';
import { setConcurrencyLimit } from './helpers/limits.ts';

runAuthMatrix({ method: 'GET', route: '/api/analytics/calls/daily', path: () => '/api/analytics/calls/daily', permission: 'analytics:read' });

interface MadeCall { at: number; agentId: string; cost: number; duration: number }

/** Days around the DST changes of 2026 in America/New_York, Europe/Berlin and Australia/Lord_Howe. */
const DST_DAYS = ['2026-03-08', '2026-03-29', '2026-04-05', '2026-10-04', '2026-10-25', '2026-11-01'];

function instants(): number[] {
  const out: number[] = [];
  let seed = 7;
  const random = () => ((seed = (seed * 48271) % 2147483647) / 2147483647);
  for (const day of DST_DAYS) {
    const base = Date.parse(`${day}T00:00:00Z`);
    for (let t = base - 8 * 3600_000; t < base + 30 * 3600_000; t += 97 * 60_000) out.push(t + Math.floor(random() * 60_000));
  }
  for (let i = 0; i < 6; i++) out.push(Date.parse('2026-03-08T06:00:00Z') + Math.floor(random() * 7200_000)); // minute series
  return out;
}

/** The brute force: every call's local day by the platform's Intl, independently of the server's rollups. */
function expectedDays(calls: MadeCall[], tz: string, from: string, to: string, agentId?: string) {
  const days = new Map<string, { calls: number; cost: number; duration: number }>();
  for (const call of calls) {
    if (agentId && call.agentId !== agentId) continue;
    const day = new Date(call.at).toLocaleDateString('en-CA', { timeZone: tz });
    if (day < from || day > to) continue;
    const sums = days.get(day) ?? { calls: 0, cost: 0, duration: 0 };
    sums.calls += 1;
    sums.cost += call.cost;
    sums.duration += call.duration;
    days.set(day, sums);
  }
  return days;
}

const round = (n: number) => Math.round(n * 10_000) / 10_000;

describe('analytics: daily and per-minute series from the rollups', () => {
  let org: TestOrg;
  let agents: string[];
  const made: MadeCall[] = [];
  const query = async (params: string, who: TestOrg = org) => {
    const { app } = await testEnv();
    return app.inject({ url: `/api/analytics/calls/daily?${params}`, headers: asRole(who, 'user') });
  };

  before(async () => {
    org = await createOrg();
    await setConcurrencyLimit(org.orgId, 100_000); // every call of the fixture is active at once while it is made
    agents = [(await createAgent(org)).agent_id, (await createAgent(org)).agent_id];
    const times = instants();
    await Promise.all(times.map(async (at, i) => {
      const agentId = agents[i % 2]!;
      const duration = 30 + (i % 7) * 11.5;
      const cost = round(0.25 + (i % 5) * 1.125);
      const call = await createCall(org, agentId, { status: 'in_progress', start_time: new Date(at).toISOString() });
      const res = await patchCall(org, call.call_sid, { status: 'completed', end_time: new Date(at + duration * 1000).toISOString(), total_cost: cost });
      assert.equal(res.statusCode, 200, res.body);
      made.push({ at, agentId, cost, duration });
    }));
    // A call that has not ended is not counted.
    await createCall(org, agents[0]!, { status: 'in_progress', start_time: '2026-03-08T06:30:00Z' });
  });

  for (const tz of ['UTC', 'America/New_York', 'Europe/Berlin', 'Asia/Kolkata', 'Asia/Kathmandu', 'Australia/Lord_Howe']) {
    test(`days in ${tz} match a brute-force count, every day present and zero-filled`, async () => {
      const [from, to] = ['2026-03-06', '2026-11-03'];
      for (const agentId of [undefined, agents[1]]) {
        const res = await query(`start_date=${from}&end_date=${to}&timezone=${encodeURIComponent(tz)}${agentId ? `&agent_id=${agentId}` : ''}`);
        assert.equal(res.statusCode, 200, res.body);
        const data = res.json().data;
        assert.equal(data.granularity, 'day');
        assert.equal(data.daily.length, 243);
        assert.equal(data.daily[0].date, from);
        assert.equal(data.daily.at(-1).date, to);
        assert.equal(new Date(data.period.start).toLocaleString('sv-SE', { timeZone: tz }), `${from} 00:00:00`);
        assert.equal(new Date(data.period.end).toLocaleString('sv-SE', { timeZone: tz }), '2026-11-04 00:00:00');
        const expected = expectedDays(made, tz, from, to, agentId);
        for (const point of data.daily) {
          const want = expected.get(point.date) ?? { calls: 0, cost: 0, duration: 0 };
          assert.deepEqual(
            [point.calls, point.cost_credits, point.total_duration_seconds],
            [want.calls, round(want.cost), round(want.duration)],
            `${tz} ${point.date}${agentId ? ' (agent)' : ''}`,
          );
        }
        const counted = data.daily.reduce((n: number, p: { calls: number }) => n + p.calls, 0);
        assert.equal(counted, [...expected.values()].reduce((n, s) => n + s.calls, 0));
      }
    });
  }

  test('minute points: every minute present, matching a brute-force count, filtered by agent', async () => {
    const start = Date.parse('2026-03-08T06:00:00Z');
    for (const agentId of [undefined, agents[0]]) {
      const res = await query(`start_time=2026-03-08T06:00:00Z&end_time=2026-03-08T08:00:00Z${agentId ? `&agent_id=${agentId}` : ''}`);
      assert.equal(res.statusCode, 200, res.body);
      const data = res.json().data;
      assert.equal(data.granularity, 'minute');
      assert.deepEqual(data.period, { start: '2026-03-08T06:00:00.000Z', end: '2026-03-08T08:00:00.000Z' });
      assert.equal(data.daily.length, 120);
      data.daily.forEach((point: { date: string; calls: number; cost_credits: number }, i: number) => {
        const minute = start + i * 60_000;
        assert.equal(point.date, new Date(minute).toISOString());
        const inMinute = made.filter((c) => c.at >= minute && c.at < minute + 60_000 && (!agentId || c.agentId === agentId));
        assert.equal(point.calls, inMinute.length, point.date);
        assert.equal(point.cost_credits, round(inMinute.reduce((s, c) => s + c.cost, 0)), point.date);
      });
    }
  });

  test('defaults: the last 30 days to today in UTC; minutes default to 24 hours or now', async () => {
    const data = (await query('')).json().data;
    assert.equal(data.daily.length, 31);
    assert.equal(data.daily.at(-1).date, new Date().toISOString().slice(0, 10));
    assert.equal(data.timezone, 'UTC');
    const hourAgo = new Date(Date.now() - 3600_000).toISOString();
    const minutes = (await query(`start_time=${hourAgo}`)).json().data.daily.length;
    assert.ok(minutes >= 60 && minutes <= 62, String(minutes));
    assert.equal((await query('start_time=2026-01-01T00:00:00Z')).json().data.daily.length, 1440);
  });

  test('limits: 366 days and 24 hours pass; beyond them, bad dates, bad zones and end before start → 400', async () => {
    assert.equal((await query('start_date=2025-01-01&end_date=2026-01-01')).json().data.daily.length, 366);
    assert.equal((await query('start_time=2026-03-08T00:00:00Z&end_time=2026-03-09T00:00:00Z')).json().data.daily.length, 1440);
    const bad: Array<[string, string]> = [
      ['start_date=2025-01-01&end_date=2026-01-02', 'querystring.end_date'],
      ['start_date=2026-03-10&end_date=2026-03-09', 'querystring.end_date'],
      ['start_date=2026-02-30', 'querystring.start_date'],
      ['start_date=2026-3-1', 'querystring.start_date'],
      ['timezone=Mars/Olympus', 'querystring.timezone'],
      ['start_time=2026-03-08T00:00:00Z&end_time=2026-03-09T00:00:01Z', 'querystring.end_time'],
      ['start_time=2026-03-08T00:00:00Z&end_time=2026-03-08T00:00:00Z', 'querystring.end_time'],
      ['start_time=yesterday', 'querystring.start_time'],
      ['end_time=2026-03-08T00:00:00Z', 'querystring.end_time'],
      ['start_time=2026-03-08T00:00:00Z&start_date=2026-03-08', 'querystring.start_time'],
    ];
    for (const [params, path] of bad) {
      const res = await query(params);
      assert.equal(res.statusCode, 400, params);
      assert.equal(res.json().code, 'validation_error');
      assert.ok(res.json().errors.some((e: { path: string }) => e.path === path), `${params}: ${res.body}`);
    }
  });

  test('days of the first centuries are those years in every zone (years 0001-0099 are not 1901-1999), and a period must start in year 0001', async () => {
    for (const tz of ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kolkata']) {
      const res = await query(`start_date=0050-03-01&end_date=0050-03-02&timezone=${tz}`);
      assert.equal(res.statusCode, 200, res.body);
      const { period, daily } = res.json().data;
      assert.deepEqual(daily.map((p: { date: string }) => p.date), ['0050-03-01', '0050-03-02']);
      // Each bound is the local midnight of its day, read back with the platform's own time-zone database.
      const wall = (iso: string) => {
        const parts = new Intl.DateTimeFormat('en-US', { timeZone: tz, hourCycle: 'h23', era: 'short', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' }).formatToParts(new Date(iso));
        return parts.filter((p) => p.type !== 'literal').map((p) => p.value).join(' ');
      };
      assert.equal(wall(period.start), '03 01 50 AD 00 00 00', `${tz} ${period.start}`);
      assert.equal(wall(period.end), '03 03 50 AD 00 00 00', `${tz} ${period.end}`);
      assert.ok(period.start.startsWith('0050-0'), period.start);
    }
    const bad: Array<[string, string]> = [
      ['start_date=0000-12-31&end_date=0001-01-02', 'querystring.start_date'],
      ['end_date=0001-01-10', 'querystring.end_date'],
      // Tokyo's midnight of 0001-01-01 (local mean time, +09:18:59) is still year 0 in UTC.
      ['start_date=0001-01-01&end_date=0001-01-02&timezone=Asia/Tokyo', 'querystring.start_date'],
    ];
    for (const [params, path] of bad) {
      const res = await query(params);
      assert.equal(res.statusCode, 400, `${params}: ${res.body}`);
      assert.ok(res.json().errors.some((e: { path: string }) => e.path === path), `${params}: ${res.body}`);
    }
  });

  test("another organization sees only its own zeros, even naming this organization's agent", async () => {
    const other = await createOrg();
    const data = (await query(`start_date=2026-03-06&end_date=2026-11-03&agent_id=${agents[0]}`, other)).json().data;
    assert.ok(data.daily.every((p: { calls: number }) => p.calls === 0));
  });
});
