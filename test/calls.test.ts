import assert from 'node:assert/strict';
import { setConcurrencyLimit } from './helpers/limits.ts';
import { describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { runAuthMatrix } from './helpers/auth-matrix.ts';
import { testEnv } from './helpers/env.ts';
import { asRole, createAgent, createOrg, type TestOrg } from './helpers/fixtures.ts';
import { balanceOf, createCall, finishedCall, grantCredits, patchCall, uploadRecording } from './helpers/calls.ts';
import { toneWav } from '../src/modules/calls/recordings/audio.ts';

const breakdown = { stt: 1.5, llm: 2.25, tts: 1, telephony: 0.75, platform: 0.5 }; // 6 credits

// The matrix makes a call for every request in one organization: more than the default limit are active at once.
const callPath = async (org: TestOrg) => { await setConcurrencyLimit(org.orgId, 100_000); return `/api/calls/${(await createCall(org, (await createAgent(org)).agent_id)).call_sid}`; };
runAuthMatrix({ method: 'POST', route: '/api/calls', path: () => '/api/calls', body: () => ({ agent_id: 'agent_000000000000', call_type: 'inbound', to_number: '+14155550100' }), permission: 'calls:write' });
runAuthMatrix({ method: 'GET', route: '/api/calls', path: () => '/api/calls', permission: 'calls:read' });
runAuthMatrix({ method: 'GET', route: '/api/calls/{call_sid}', path: callPath, permission: 'calls:read', foreignStatus: 404 });
runAuthMatrix({ method: 'PATCH', route: '/api/calls/{call_sid}', path: callPath, body: () => ({ status: 'ringing' }), permission: 'calls:write', foreignStatus: 404 });

describe('calls: the runtime reports', () => {
  test('create: generated sid, agent name and recording flag copied from the agent', async () => {
    const org = await createOrg();
    const agentId = (await createAgent(org, { agent_name: 'Sales line', recording_enabled: true })).agent_id;
    const call = await createCall(org, agentId, { call_type: 'outbound' });
    assert.match(call.call_sid, /^call_[A-Za-z0-9]{20}$/);
    assert.equal(call.agent_name, 'Sales line');
    assert.equal(call.recording_enabled, true);
    assert.equal(call.status, 'queued');
    assert.equal(call.billing_status, 'pending');
    assert.equal(call.client_id, org.orgId);
    assert.equal(call.call_type, 'outbound');
    assert.equal(call.to_number, '+14155550100');
    assert.equal(call.from_number, '+14155550111');
    assert.deepEqual(call.transcript, []);
    assert.equal(call.start_time, null);
  });

  test('create: a given call_sid is kept and cannot be reused in its organization (409)', async () => {
    const org = await createOrg();
    const sid = `call_Given${Date.now()}`;
    const call = await createCall(org, (await createAgent(org)).agent_id, { call_sid: sid });
    assert.equal(call.call_sid, sid);
    const { app } = await testEnv();
    const res = await app.inject({ method: 'POST', url: '/api/calls', headers: asRole(org, 'admin'), payload: { agent_id: (await createAgent(org)).agent_id, call_type: 'inbound', to_number: '+14155550100', call_sid: sid } });
    assert.equal(res.statusCode, 409);
    assert.equal(res.json().code, 'call_exists');
  });

  test("another organization's sid is neither a conflict nor revealed: both calls live apart (update, bill, get, list, recording)", async () => {
    const { app, database } = await testEnv();
    const [a, b] = [await createOrg(), await createOrg()];
    const sid = `call_Shared${Date.now()}`;
    const agentA = (await createAgent(a, { agent_name: 'A line', recording_enabled: true })).agent_id;
    const agentB = (await createAgent(b, { agent_name: 'B line', recording_enabled: true })).agent_id;
    await createCall(a, agentA, { call_sid: sid, to_number: '+14155550101' });
    const created = await app.inject({
      method: 'POST', url: '/api/calls', headers: asRole(b, 'agent_manager'),
      payload: { agent_id: agentB, call_type: 'outbound', to_number: '+14155550102', call_sid: sid },
    });
    assert.equal(created.statusCode, 200, created.body);
    assert.deepEqual([created.json().data.client_id, created.json().data.agent_name, created.json().data.status], [b.orgId, 'B line', 'queued']);

    await grantCredits(a.orgId, 10);
    await grantCredits(b.orgId, 10);
    const endedA = await patchCall(a, sid, { status: 'completed', end_reason: 'user_hangup', total_cost: 6 });
    assert.equal(endedA.json().data.billing_status, 'billed', endedA.body);
    const stillB = (await app.inject({ url: `/api/calls/${sid}`, headers: asRole(b, 'user') })).json().data;
    assert.deepEqual([stillB.status, stillB.billing_status, stillB.total_cost], ['queued', 'pending', null]);
    const endedB = await patchCall(b, sid, { status: 'completed', end_reason: 'agent_hangup', total_cost: 2 });
    assert.equal(endedB.statusCode, 200, endedB.body);
    assert.equal(endedB.json().data.billing_status, 'billed');
    assert.deepEqual([await balanceOf(a.orgId), await balanceOf(b.orgId)], [4, 8]);
    const usage = await database.db.execute(sql`SELECT client_id, amount FROM credit_transactions WHERE kind = 'call_usage' AND source_id = ${sid} ORDER BY client_id`);
    assert.deepEqual(usage.rows.map((r) => [r.client_id, Number(r.amount)]).sort(), [[a.orgId, -6], [b.orgId, -2]].sort());

    for (const [org, agent, to, cost, reason] of [[a, agentA, '+14155550101', 6, 'user_hangup'], [b, agentB, '+14155550102', 2, 'agent_hangup']] as const) {
      const got = (await app.inject({ url: `/api/calls/${sid}`, headers: asRole(org, 'user') })).json().data;
      assert.deepEqual([got.client_id, got.agent_id, got.to_number, got.total_cost, got.end_reason], [org.orgId, agent, to, cost, reason]);
      const listed = (await app.inject({ url: '/api/calls', headers: asRole(org, 'user') })).json().data;
      assert.deepEqual(listed.map((c: { call_sid: string; client_id: string }) => [c.call_sid, c.client_id]), [[sid, org.orgId]]);
    }

    const audio = { a: toneWav(0.5, 440), b: toneWav(0.7, 660) };
    assert.equal((await uploadRecording(a, sid, audio.a)).statusCode, 200);
    assert.equal((await uploadRecording(b, sid, audio.b)).statusCode, 200);
    for (const [org, expected] of [[a, audio.a], [b, audio.b]] as const) {
      const download = await app.inject({ url: `/api/calls/${sid}/recording/download`, headers: asRole(org, 'user') });
      assert.equal(download.statusCode, 200);
      assert.ok(download.rawPayload.equals(expected), `${org.orgId} hears its own recording`);
    }
  });

  test('create: unknown or foreign agent → 404; bad fields → 400 naming them', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const other = await createOrg();
    const foreignAgent = (await createAgent(other)).agent_id;
    const res = await app.inject({ method: 'POST', url: '/api/calls', headers: asRole(org, 'admin'), payload: { agent_id: foreignAgent, call_type: 'inbound', to_number: '+14155550100' } });
    assert.equal(res.statusCode, 404);
    assert.equal(res.json().code, 'not_found');
    const bad = await app.inject({
      method: 'POST', url: '/api/calls', headers: asRole(org, 'admin'),
      payload: { agent_id: foreignAgent, call_type: 'video', to_number: '555-0100', from_number: '+0123', call_sid: 'call_bad-sid' },
    });
    assert.equal(bad.statusCode, 400);
    const paths = bad.json().errors.map((e: { path: string }) => e.path).sort();
    assert.deepEqual(paths, ['body.call_sid', 'body.call_type', 'body.from_number', 'body.to_number']);
  });

  test('status moves forward; start_time set on in_progress; the end derives duration and turn count', async () => {
    const org = await createOrg();
    const call = await createCall(org, (await createAgent(org)).agent_id);
    assert.equal((await patchCall(org, call.call_sid, { status: 'ringing' })).json().data.status, 'ringing');
    const started = (await patchCall(org, call.call_sid, { status: 'in_progress', start_time: '2026-11-20T10:00:00.000Z' })).json().data;
    assert.equal(started.start_time, '2026-11-20T10:00:00.000Z');
    const back = await patchCall(org, call.call_sid, { status: 'ringing' });
    assert.equal(back.statusCode, 409);
    assert.equal(back.json().code, 'invalid_status_transition');
    const transcript = [
      { role: 'agent', text: 'Hello, Acme.', start_seconds: 0 },
      { role: 'user', text: 'I need a plumber.', start_seconds: 2.5 },
      { role: 'agent', text: 'Booked.', start_seconds: 6 },
    ];
    const ended = (await patchCall(org, call.call_sid, {
      status: 'completed', end_time: '2026-11-20T10:01:30.500Z', end_reason: 'tool_end_call', transcript, cost_breakdown: breakdown,
    })).json().data;
    assert.equal(ended.status, 'completed');
    assert.equal(ended.end_time, '2026-11-20T10:01:30.500Z');
    assert.equal(ended.duration_seconds, 90.5);
    assert.equal(ended.turn_count, 3);
    assert.equal(ended.total_cost, 6);
    assert.equal(ended.end_reason, 'tool_end_call');
    assert.deepEqual(ended.transcript, transcript);
    assert.deepEqual(ended.cost_breakdown, breakdown);

    const { app } = await testEnv();
    const got = (await app.inject({ method: 'GET', url: `/api/calls/${call.call_sid}`, headers: asRole(org, 'user') })).json().data;
    assert.deepEqual(got, ended);

    for (const body of [{ status: 'failed' }, { turn_count: 4 }, { status: 'completed' }]) {
      const again = await patchCall(org, call.call_sid, body);
      assert.equal(again.statusCode, 409);
      assert.equal(again.json().code, 'call_finalized');
    }
  });

  test('report rules: end_reason and end_time need a final status; the cost must add up; end not before start', async () => {
    const org = await createOrg();
    const call = await createCall(org, (await createAgent(org)).agent_id, { status: 'in_progress', start_time: '2026-11-20T10:00:00.000Z' });
    assert.equal(call.status, 'in_progress');
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ end_reason: 'user_hangup' }, 'body.end_reason'],
      [{ end_time: '2026-11-20T10:05:00.000Z' }, 'body.end_time'],
      [{ status: 'completed', total_cost: 5, cost_breakdown: breakdown }, 'body.total_cost'],
      [{ status: 'completed', end_time: '2026-11-20T09:59:00.000Z' }, 'body.end_time'],
      [{ status: 'completed', end_reason: 'dropped' }, 'body.end_reason'],
      [{ status: 'completed', transcript: [{ role: 'user', text: 'x' }] }, 'body.transcript.0.start_seconds'],
      [{}, 'body'],
    ];
    for (const [body, path] of cases) {
      const res = await patchCall(org, call.call_sid, body);
      assert.equal(res.statusCode, 400, `${JSON.stringify(body)}: ${res.body}`);
      assert.ok(res.json().errors.some((e: { path: string }) => e.path === path), `${JSON.stringify(body)}: ${res.body}`);
    }
    const { app } = await testEnv();
    assert.equal((await app.inject({ method: 'GET', url: `/api/calls/${call.call_sid}`, headers: asRole(org, 'user') })).json().data.status, 'in_progress');
  });

  test('a call that never connects ends with zero duration; an unknown call is 404', async () => {
    const org = await createOrg();
    const call = await createCall(org, (await createAgent(org)).agent_id);
    const ended = (await patchCall(org, call.call_sid, { status: 'no_answer' })).json().data;
    assert.equal(ended.duration_seconds, 0);
    assert.equal(ended.start_time, null);
    assert.equal(ended.billing_status, 'waived');
    assert.equal((await patchCall(org, 'call_doesnotexist0000', { status: 'ringing' })).statusCode, 404);
  });
});

describe('calls: billing', () => {
  test('a cost is debited once: billed with credits, insufficient_credits without, waived when free', async () => {
    const { database } = await testEnv();
    const org = await createOrg();
    const agentId = (await createAgent(org)).agent_id;
    const poor = await finishedCall(org, agentId, { cost_breakdown: breakdown });
    assert.equal(poor.billing_status, 'insufficient_credits');
    assert.equal(await balanceOf(org.orgId), 0);

    await grantCredits(org.orgId, 10);
    const paid = await finishedCall(org, agentId, { total_cost: 6.1234 });
    assert.equal(paid.billing_status, 'billed');
    assert.equal(await balanceOf(org.orgId), 3.8766);
    const free = await finishedCall(org, agentId, { total_cost: 0 });
    assert.equal(free.billing_status, 'waived');

    const ledger = await database.db.execute(sql`SELECT kind, amount, balance_after, source_id FROM credit_transactions WHERE client_id = ${org.orgId} ORDER BY created_at, id`);
    assert.deepEqual(ledger.rows.map((r) => [r.kind, Number(r.amount), Number(r.balance_after)]), [['adjustment', 10, 10], ['call_usage', -6.1234, 3.8766]]);
    assert.equal(ledger.rows[1]!.source_id, paid.call_sid);
  });

  test('concurrent final reports of one call: one wins, the rest are 409, one debit', async () => {
    const { database } = await testEnv();
    const org = await createOrg();
    await grantCredits(org.orgId, 100);
    const call = await createCall(org, (await createAgent(org)).agent_id, { status: 'in_progress' });
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) =>
      patchCall(org, call.call_sid, { status: i % 2 ? 'completed' : 'failed', total_cost: 7 })));
    assert.deepEqual(results.map((r) => r.statusCode).sort(), [200, ...Array(9).fill(409)]);
    assert.equal(await balanceOf(org.orgId), 93);
    const debits = await database.db.execute(sql`SELECT count(*)::int AS n FROM credit_transactions WHERE source_id = ${call.call_sid}`);
    assert.equal(debits.rows[0]!.n, 1);
    const rollup = await database.db.execute(sql`SELECT sum(calls)::int AS n FROM call_rollups WHERE client_id = ${org.orgId} AND agent_id = '*' AND grain = 'minute'`);
    assert.equal(rollup.rows[0]!.n, 1);
  });

  test('many calls against a balance that covers some: exactly those are billed, the balance never goes below zero', async () => {
    const { database } = await testEnv();
    const org = await createOrg();
    await setConcurrencyLimit(org.orgId, 1000); // 40 calls active at once, beyond the default limit
    const agentId = (await createAgent(org)).agent_id;
    await grantCredits(org.orgId, 50);
    const calls = await Promise.all(Array.from({ length: 40 }, () => createCall(org, agentId, { status: 'in_progress' })));
    const results = await Promise.all(calls.map((c) => patchCall(org, c.call_sid, { status: 'completed', total_cost: 5 })));
    const statuses = results.map((r) => r.json().data.billing_status);
    assert.equal(statuses.filter((s) => s === 'billed').length, 10);
    assert.equal(statuses.filter((s) => s === 'insufficient_credits').length, 30);
    assert.equal(await balanceOf(org.orgId), 0);
    const sum = await database.db.execute(sql`SELECT sum(amount) AS s FROM credit_transactions WHERE client_id = ${org.orgId}`);
    assert.equal(Number(sum.rows[0]!.s), 0);
  });
});

describe('calls: listing', () => {
  test('newest first with a stable cursor; filters by agent, status, type and creation time', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const [a, b] = [(await createAgent(org)).agent_id, (await createAgent(org)).agent_id];
    const made = [];
    for (let i = 0; i < 7; i++) made.push(await createCall(org, i % 2 ? a : b, { call_type: i < 3 ? 'inbound' : 'outbound' }));
    await patchCall(org, made[1]!.call_sid, { status: 'completed' });
    const list = (query: string) => app.inject({ method: 'GET', url: `/api/calls?${query}`, headers: asRole(org, 'user') });

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = (await list(`limit=3${cursor ? `&cursor=${cursor}` : ''}`)).json();
      assert.ok(page.data.length <= 3);
      assert.equal(page.pagination.page_size, page.data.length);
      seen.push(...page.data.map((c: { call_sid: string }) => c.call_sid));
      if (page.data.length === 3 && seen.length < 7) await createCall(org, a, { call_type: 'preview' }); // inserts do not disturb later pages
      cursor = page.pagination.next_cursor;
    } while (cursor);
    assert.deepEqual(seen, made.map((c) => c.call_sid).reverse());

    const ids = async (query: string) => (await list(query)).json().data.map((c: { call_sid: string }) => c.call_sid);
    const byAgent = await ids(`agent_id=${a}`);
    assert.ok(byAgent.length >= 3 && made.filter((c) => c.agent_id === a).every((c) => byAgent.includes(c.call_sid)));
    assert.deepEqual(await ids('status=completed'), [made[1]!.call_sid]);
    assert.deepEqual(await ids('call_type=inbound'), made.slice(0, 3).map((c) => c.call_sid).reverse());
    const today = new Date().toISOString().slice(0, 10);
    assert.equal((await ids(`from=${today}&to=${today}&limit=100`)).length, (await ids('limit=100')).length);
    assert.deepEqual(await ids(`to=${made[0]!.created_at}`), []);
    assert.deepEqual(await ids(`from=2000-01-01&to=2000-01-02`), []);
    const summary = (await list('limit=1')).json().data[0];
    assert.equal(summary.transcript, undefined, 'the list carries summaries only');
  });

  test('limit 1-100, unknown filters and bad cursors → 400; other organizations see nothing', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const other = await createOrg();
    await createCall(org, (await createAgent(org)).agent_id);
    for (const query of ['limit=0', 'limit=101', 'cursor=%%%', 'status=lost', 'from=yesterday', 'color=red']) {
      const res = await app.inject({ method: 'GET', url: `/api/calls?${query}`, headers: asRole(org, 'user') });
      assert.equal(res.statusCode, 400, query);
    }
    const theirs = await app.inject({ method: 'GET', url: '/api/calls', headers: asRole(other, 'admin') });
    assert.deepEqual(theirs.json().data, []);
    const defaults = await app.inject({ method: 'GET', url: '/api/calls', headers: asRole(org, 'user') });
    assert.equal(defaults.json().pagination.has_more, false);
  });
});
