import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { parse } from 'csv-parse/sync';
import { testEnv } from './helpers/env.ts';
import { asRole, createAgent, type TestOrg } from './helpers/fixtures.ts';
import { finishedCall } from './helpers/calls.ts';
import { ANALYSIS, TRANSCRIPT, analyzed, getCall, setup, waitFor, type Setup } from './helpers/analysis.ts';

/**
 * Finding and exporting calls by their analysis (extensions.md §13): `analysis.success`,
 * `analysis.sentiment` and `analysis.data.<key>` on GET /api/calls and exports, checked against a
 * brute-force filter over every call as GET /api/calls/{call_sid} shows it. The analyses are real:
 * the job asked the LLM stand-in, which answered varied (and sometimes invalid) output.
 */
type Call = Record<string, any> & { call_sid: string };

function rng(seed: number) {
  let s = seed;
  return () => ((s = (s * 1103515245 + 12345) % 2147483648) / 2147483648);
}
const pick = <T>(random: () => number, values: readonly T[]) => values[Math.floor(random() * values.length)]!;

let env: Setup;
let secondAgent: string;
/** Every call of the organization, newest first (the list's order), as GET /api/calls/{call_sid} shows it. */
let calls: Call[] = [];

async function listAll(org: TestOrg, query: string): Promise<string[]> {
  const { app } = await testEnv();
  const sids: string[] = [];
  let cursor: string | null = null;
  do {
    const res: Awaited<ReturnType<typeof app.inject>> = await app.inject({ url: `/api/calls?limit=7&${query}${cursor ? `&cursor=${cursor}` : ''}`, headers: asRole(org, 'user') });
    assert.equal(res.statusCode, 200, `${query}: ${res.body}`);
    sids.push(...res.json().data.map((c: Call) => c.call_sid));
    cursor = res.json().pagination.next_cursor;
  } while (cursor);
  return sids;
}

/** A JSON value as `->>` gives it: a string's own text, anything else its JSON text. */
const asText = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

/** The filters as query pairs, and what each keeps, computed from the calls themselves. */
const FILTERS: Array<[Record<string, string>, (c: Call) => boolean]> = [
  [{ 'analysis.success': 'true' }, (c) => c.analysis?.success === true],
  [{ 'analysis.success': 'false' }, (c) => c.analysis?.success === false],
  ...(['positive', 'neutral', 'negative'] as const).map((s): [Record<string, string>, (c: Call) => boolean] => [{ 'analysis.sentiment': s }, (c) => c.analysis?.sentiment === s]),
  [{ 'analysis.data.party_size': '4' }, (c) => c.analysis?.structured_data != null && 'party_size' in c.analysis.structured_data && asText(c.analysis.structured_data.party_size) === '4'],
  [{ 'analysis.data.booked': 'true' }, (c) => c.analysis?.structured_data?.booked === true],
  [{ 'analysis.data.name': 'Ann Lee' }, (c) => c.analysis?.structured_data?.name === 'Ann Lee'],
  [{ 'analysis.data.booked': 'false', 'analysis.sentiment': 'negative' }, (c) => c.analysis?.structured_data?.booked === false && c.analysis?.sentiment === 'negative'],
  [{ agent_id: '<second>', 'analysis.success': 'true' }, (c) => c.agent_id === secondAgent && c.analysis?.success === true],
  [{ 'analysis.data.party_size': '2', 'analysis.data.booked': 'true' }, (c) => c.analysis?.structured_data?.party_size === 2 && c.analysis?.structured_data?.booked === true],
  [{ 'analysis.data.nothing': 'x' }, () => false],
];
const withAgent = (filters: Record<string, string>) => Object.fromEntries(Object.entries(filters).map(([k, v]) => [k, v === '<second>' ? secondAgent : v]));
const queryOf = (filters: Record<string, string>) => new URLSearchParams(withAgent(filters)).toString();

describe('calls found and exported by their analysis (extensions.md §13)', () => {
  before(async () => {
    env = await setup();
    secondAgent = (await createAgent(env.org, { llm_provider: 'openai', llm_model: 'gpt-test', analysis: ANALYSIS })).agent_id;
    const random = rng(1332);
    for (let i = 0; i < 30; i++) {
      const agentId = random() < 0.5 ? env.agentId : secondAgent;
      if (random() < 0.15) {
        calls.push(await finishedCall(env.org, agentId, {})); // no transcript: never analyzed
        continue;
      }
      if (random() < 0.12) {
        env.llm.script.push({ text: 'not json' }, { text: '{"summary": "x"}' }); // invalid twice: failed
      } else {
        const data: Record<string, unknown> = { booked: random() < 0.6, party_size: 1 + Math.floor(random() * 4) };
        if (random() < 0.6) data.name = pick(random, ['Ann', 'Ann Lee', 'Bo', '4']);
        env.llm.script.push({ text: JSON.stringify({
          summary: `Call ${i}.`, success: random() < 0.5, success_reason: pick(random, ['Booked.', 'No table, "full"', 'Line one,\nline two']),
          sentiment: pick(random, ['positive', 'neutral', 'negative']), structured_data: data,
        }) });
      }
      const call = await finishedCall(env.org, agentId, { transcript: TRANSCRIPT });
      calls.push(await analyzed(env.org, call.call_sid)); // one at a time: the script's answers go to the calls in order
    }
    const order = await listAll(env.org, '');
    const byId = new Map<string, Call>();
    for (const call of calls) byId.set(call.call_sid, await getCall(env.org, call.call_sid));
    calls = order.map((sid) => byId.get(sid)!);
    assert.equal(calls.length, 30);
  });

  test('the seed has analyses of every kind', () => {
    const statuses = new Set(calls.map((c) => c.analysis?.status ?? 'none'));
    assert.deepEqual([...statuses].sort(), ['completed', 'failed', 'none']);
    for (const [filters, keep] of FILTERS.slice(0, 8)) assert.ok(calls.some(keep), `the seed has calls for ${queryOf(filters)}`);
  });

  test('GET /api/calls filters analysis.success, analysis.sentiment and analysis.data.<key> as the brute force does, paged in order', async () => {
    for (const [filters, keep] of FILTERS) {
      assert.deepEqual(await listAll(env.org, queryOf(filters)), calls.filter(keep).map((c) => c.call_sid), queryOf(filters));
    }
  });

  test('each list item carries the outcome of its analysis, as the call shows it', async () => {
    const { app } = await testEnv();
    const res = await app.inject({ url: '/api/calls?limit=100', headers: asRole(env.org, 'user') });
    assert.equal(res.statusCode, 200, res.body);
    const outcomes = res.json().data.map((c: Call) => [c.call_sid, c.analysis_status, c.analysis_success, c.analysis_sentiment]);
    assert.deepEqual(outcomes, calls.map((c) => [c.call_sid, c.analysis?.status ?? null, c.analysis?.success ?? null, c.analysis?.sentiment ?? null]));
    const one = await getCall(env.org, calls[0]!.call_sid);
    assert.ok(!('analysis_status' in one), 'the call has the whole analysis instead');
  });

  test('usage analytics group by analysis.success, analysis.sentiment and analysis.data.<key>, with success_rate, as the brute force does', async () => {
    const { app } = await testEnv();
    const now = Date.now();
    const window = `start=${new Date(now - 86_400_000).toISOString()}&end=${new Date(now + 86_400_000).toISOString()}&granularity=day`;
    const groupings: Array<[string, (c: Call) => string | null]> = [
      ['analysis.success', (c) => (c.analysis?.success == null ? null : String(c.analysis.success))],
      ['analysis.sentiment', (c) => c.analysis?.sentiment ?? null],
      ['analysis.data.booked', (c) => (c.analysis?.structured_data?.booked === undefined ? null : asText(c.analysis.structured_data.booked))],
      ['analysis.data.name', (c) => (c.analysis?.structured_data?.name === undefined ? null : asText(c.analysis.structured_data.name))],
      ['agent', (c) => c.agent_id],
    ];
    const rate = (of: Call[]) => {
      const judged = of.filter((c) => c.analysis?.success != null);
      return judged.length === 0 ? 0 : judged.filter((c) => c.analysis.success === true).length / judged.length;
    };
    const cents = (of: Call[]) => of.reduce((sum, c) => sum + Math.round(c.total_cost * 10_000), 0) / 10_000;
    for (const [groupBy, valueOf] of groupings) {
      const res = await app.inject({ url: `/api/analytics/usage?${window}&group_by=${groupBy}&metrics=calls,success_rate,cost`, headers: asRole(env.org, 'user') });
      assert.equal(res.statusCode, 200, res.body);
      const report = res.json().data;
      const field = groupBy === 'agent' ? 'agent_id' : groupBy;
      const expected = new Map<string | null, Call[]>();
      for (const call of calls) expected.set(valueOf(call), [...(expected.get(valueOf(call)) ?? []), call]);
      assert.deepEqual(report.series.map((s: any) => s.group[field]).sort(), [...expected.keys()].sort(), groupBy);
      for (const series of report.series) {
        const mine = expected.get(series.group[field])!;
        const sum = (m: string) => series.points.reduce((n: number, p: any) => n + p[m], 0);
        assert.equal(sum('calls'), mine.length, `${groupBy} ${series.group[field]}`);
        assert.equal(Math.round(sum('cost') * 10_000) / 10_000, cents(mine), `${groupBy} ${series.group[field]} cost`);
        const judgedPoint = series.points.filter((p: any) => p.calls > 0);
        if (judgedPoint.length === 1) assert.ok(Math.abs(judgedPoint[0].success_rate - rate(mine)) < 1e-9, `${groupBy} ${series.group[field]} success_rate`);
      }
      assert.equal(report.totals.calls, calls.length);
      assert.ok(Math.abs(report.totals.success_rate - rate(calls)) < 1e-9, `${groupBy}: totals.success_rate`);
    }
  });

  test('a rerun that changes the judgement moves the call between groups, in the filters and in the usage', async () => {
    const { app } = await testEnv();
    const target = calls.find((c) => c.analysis?.status === 'completed' && c.analysis.success === true && c.analysis.sentiment !== 'negative')!;
    env.llm.script.push({ text: JSON.stringify({ summary: 'Changed.', success: false, success_reason: 'No.', sentiment: 'negative', structured_data: { booked: false, party_size: 2 } }) });
    const res = await app.inject({ method: 'POST', url: `/api/calls/${target.call_sid}/analyze`, headers: asRole(env.org, 'admin'), payload: {} });
    assert.equal(res.statusCode, 200, res.body);
    const changed = await waitFor('the rerun', async () => {
      const call = await getCall(env.org, target.call_sid);
      return call.analysis.summary === 'Changed.' ? call : undefined;
    });
    calls = calls.map((c) => (c.call_sid === target.call_sid ? changed : c));
    for (const [filters, keep] of FILTERS) {
      assert.deepEqual(await listAll(env.org, queryOf(filters)), calls.filter(keep).map((c) => c.call_sid), queryOf(filters));
    }
    const now = Date.now();
    const usage = await app.inject({
      url: `/api/analytics/usage?start=${new Date(now - 86_400_000).toISOString()}&end=${new Date(now + 86_400_000).toISOString()}&granularity=day&group_by=analysis.success&metrics=calls,success_rate,cost`,
      headers: asRole(env.org, 'user'),
    });
    const report = usage.json().data;
    const count = (value: string | null) => calls.filter((c) => (c.analysis?.success == null ? null : String(c.analysis.success)) === value).length;
    for (const series of report.series) {
      assert.equal(series.points.reduce((n: number, p: any) => n + p.calls, 0), count(series.group['analysis.success']), `group ${series.group['analysis.success']}`);
    }
    const judged = calls.filter((c) => c.analysis?.success != null);
    assert.ok(Math.abs(report.totals.success_rate - judged.filter((c) => c.analysis.success).length / judged.length) < 1e-9);
    assert.equal(Math.round(report.totals.cost * 10_000), calls.reduce((n, c) => n + Math.round(c.total_cost * 10_000), 0), 'the rerun\'s cost counted once');
  });

  test('bad analysis filters are 400', async () => {
    const { app } = await testEnv();
    const tooMany = Array.from({ length: 11 }, (_, i) => `analysis.data.k${i}=v`).join('&');
    for (const query of ['analysis.success=maybe', 'analysis.sentiment=angry', tooMany, `analysis.data.${'k'.repeat(65)}=v`]) {
      const res = await app.inject({ url: `/api/calls?${query}`, headers: asRole(env.org, 'user') });
      assert.equal(res.statusCode, 400, `${query}: ${res.body}`);
    }
  });

  test('exports take the same filters and add the analysis columns (CSV and JSON lines)', async () => {
    const columns = ['analysis_status', 'analysis_success', 'analysis_success_reason', 'analysis_sentiment', 'analysis_summary', 'analysis_structured_data'];
    const fields = (c: Call) => ({
      analysis_status: c.analysis?.status ?? null, analysis_success: c.analysis?.success ?? null, analysis_success_reason: c.analysis?.success_reason ?? null,
      analysis_sentiment: c.analysis?.sentiment ?? null, analysis_summary: c.analysis?.summary ?? null, analysis_structured_data: c.analysis?.structured_data ?? null,
    });
    const csvText = (value: unknown) => (value === null ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value));
    for (const [filters, keep] of [[{}, () => true] as const, FILTERS[2]!, FILTERS[6]!]) {
      const expected = calls.filter(keep);
      const csv = await runExport(env.org, { format: 'csv', ...withAgent(filters) });
      const rows = parse(csv, { columns: true }) as Array<Record<string, string>>;
      assert.deepEqual(rows.map((r) => r.call_sid), expected.map((c) => c.call_sid), queryOf(filters));
      assert.deepEqual(Object.keys(rows[0]!).slice(-columns.length), columns);
      rows.forEach((row, n) => {
        const want = fields(expected[n]!);
        for (const column of columns) {
          const value = want[column as keyof typeof want];
          if (column === 'analysis_structured_data' && value !== null) assert.deepEqual(JSON.parse(row[column]!), value);
          else assert.equal(row[column], csvText(value), `${row.call_sid} ${column}`);
        }
      });
      const jsonl = await runExport(env.org, { format: 'jsonl', ...withAgent(filters) });
      const lines = jsonl.toString('utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
      assert.deepEqual(lines.map((l) => Object.fromEntries(columns.map((c) => [c, l[c]]))), expected.map(fields), queryOf(filters));
    }
  });
});

async function runExport(org: TestOrg, body: Record<string, unknown>): Promise<Buffer> {
  const { app } = await testEnv();
  const res = await app.inject({ method: 'POST', url: '/api/calls/exports', headers: asRole(org, 'user'), payload: body });
  assert.equal(res.statusCode, 200, res.body);
  for (let i = 0; i < 300; i++) {
    const view = (await app.inject({ url: `/api/calls/exports/${res.json().data.export_id}`, headers: asRole(org, 'user') })).json().data;
    if (view.status === 'completed') return (await app.inject({ url: view.download_url.replace(/^https?:\/\/[^/]+/, '') })).rawPayload;
    assert.notEqual(view.status, 'failed');
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the export did not finish');
}
