import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import type { OpenAiStandin } from '../runtime/test/standins/openai.ts';
import { testEnv } from './helpers/env.ts';
import { asRole, createAgent, type TestOrg } from './helpers/fixtures.ts';
import { balanceOf, createCall, finishedCall, patchCall } from './helpers/calls.ts';
import { ANALYSIS, GRANT, TRANSCRIPT, analyzed, getCall, setup, waitFor } from './helpers/analysis.ts';
import { runAuthMatrix } from './helpers/auth-matrix.ts';
import { CallRepository } from '../src/modules/calls/repository.ts';
import { transaction } from '../src/db/unit-of-work.ts';

/**
 * Post-call analysis (extensions.md §13) against the OpenAI-compatible LLM stand-in speaking the
 * chat-completions wire protocol. Costs are recomputed here from the token counts the stand-in
 * reported and the README's default prices; the ledger and the balance are read with SQL.
 */
// README, "Prices": the defaults of llm_per_1k_input_tokens and llm_per_1k_output_tokens.
const PRICE_IN = 0.05;
const PRICE_OUT = 0.2;
const CALL_COST = { stt: 0.25, llm: 0.5, tts: 1, telephony: 1.5, platform: 0 };
const CALL_TOTAL = 3.25;
const round4 = (n: number) => Math.round(n * 10_000) / 10_000;
const costOf = (usage: Array<[number, number]>) => round4(usage.reduce((sum, [i, o]) => sum + (i / 1000) * PRICE_IN + (o / 1000) * PRICE_OUT, 0));
/** Analyses of one request each, each charged on its own (rounded to the ledger's 4 decimals). */
const eachCharged = (usage: Array<[number, number]>) => round4(usage.reduce((sum, u) => sum + costOf([u]), 0));

const VALID = { summary: 'The caller booked a table for four at eight.', success: true, success_reason: 'A booking was made.', sentiment: 'positive', structured_data: { booked: true, party_size: 4 } };
const INVALID = { ...VALID, structured_data: { booked: 'yes', party_size: 0 } };
const text = (answer: object) => ({ text: JSON.stringify(answer) });

async function sql<T = any>(text: string, values: unknown[]): Promise<T[]> {
  const { database } = await testEnv();
  return (await database.pool.query(text, values)).rows as T[];
}
const analysisRows = (org: TestOrg, callSid: string) =>
  sql<{ amount: string }>(`SELECT amount FROM credit_transactions WHERE client_id = $1 AND source_id LIKE $2`, [org.orgId, `${callSid}/analysis/%`]);
const analyzedEvents = async (org: TestOrg, callSid: string) =>
  Number((await sql(`SELECT count(*)::int AS n FROM events WHERE client_id = $1 AND type = 'call.analyzed' AND data->>'call_sid' = $2`, [org.orgId, callSid]))[0].n);
const chats = (llm: OpenAiStandin) => llm.requests.filter((r) => r.path.endsWith('/v1/chat/completions'));
/** Lets queued work settle so a duplicate would have shown. */
const settle = () => new Promise((r) => setTimeout(r, 1500));

describe('post-call analysis (extensions.md §13)', () => {
  test('a call that ends with a transcript is analyzed once: stored, charged as its own ledger entry, call.analyzed once', async () => {
    const { org, llm, agentId } = await setup();
    llm.script.push(text(VALID));
    const call = await finishedCall(org, agentId, { transcript: TRANSCRIPT, cost_breakdown: CALL_COST });
    assert.equal(call.analysis, null, 'the analysis comes after the end, from a job');
    const done = await analyzed(org, call.call_sid);
    await settle();
    const { analysis } = done;
    assert.equal(analysis.status, 'completed');
    assert.deepEqual(
      [analysis.summary, analysis.success, analysis.success_reason, analysis.sentiment, analysis.structured_data, analysis.agent_version, analysis.error],
      [VALID.summary, true, VALID.success_reason, 'positive', VALID.structured_data, 1, null],
    );
    assert.ok(Math.abs(Date.parse(analysis.analyzed_at) - Date.now()) < 600_000);
    // The model was asked with the transcript and the version's prompts and schema.
    assert.equal(chats(llm).length, 1);
    const sent = JSON.stringify(chats(llm)[0]!.json);
    for (const part of ['A table for four tonight', 'One sentence.', 'A table was booked.', '"party_size"']) assert.ok(sent.includes(part.replace(/"/g, '\\"')), part);
    const cost = costOf(llm.usage);
    assert.ok(cost > 0);
    assert.equal(done.cost_breakdown.analysis, cost);
    assert.equal(done.total_cost, round4(CALL_TOTAL + cost));
    const rows = await analysisRows(org, call.call_sid);
    assert.deepEqual(rows.map((r) => Number(r.amount)), [-cost]);
    assert.equal(await balanceOf(org.orgId), round4(GRANT - CALL_TOTAL - cost));
    assert.equal(await analyzedEvents(org, call.call_sid), 1);
  });

  test('the job delivered again, concurrently or after it ended, and the end reported again store and charge nothing more', async () => {
    const { services, database } = await testEnv();
    const { org, llm, agentId } = await setup();
    llm.script.push(text(VALID), text(VALID), text(VALID), text(VALID));
    const call = await finishedCall(org, agentId, { transcript: TRANSCRIPT, cost_breakdown: CALL_COST });
    const [run] = await sql<{ id: string }>(`SELECT id FROM call_analysis_runs WHERE client_id = $1 AND call_sid = $2`, [org.orgId, call.call_sid]);
    // Two more deliveries of the same job run beside the worker's (a retry after a lost worker, a duplicate).
    await Promise.all([0, 1].map((n) => services.callAnalysis.run({ clientId: org.orgId, runId: run!.id }, { id: `dup-${n}`, retryCount: n })));
    const done = await analyzed(org, call.call_sid);
    await services.callAnalysis.run({ clientId: org.orgId, runId: run!.id }, { id: 'late', retryCount: 2 });
    // The end told again (a late report path): the run of this call and version exists, nothing is queued.
    await transaction(database.db, async (tx) => {
      const current = await new CallRepository(tx).findBySid(org.orgId, call.call_sid);
      await services.callAnalysis.callEnded(tx, org.orgId, current!);
    });
    await settle();
    const runs = await sql(`SELECT id FROM call_analysis_runs WHERE client_id = $1 AND call_sid = $2`, [org.orgId, call.call_sid]);
    assert.equal(runs.length, 1);
    // Every attempt that asked the model asked the same question: one attempt's tokens are the cost.
    const cost = costOf([llm.usage[0]!]);
    assert.ok(llm.usage.every(([i, o]) => i === llm.usage[0]![0] && o === llm.usage[0]![1]));
    assert.equal(done.cost_breakdown.analysis, cost);
    assert.equal((await analysisRows(org, call.call_sid)).length, 1);
    assert.equal(await balanceOf(org.orgId), round4(GRANT - CALL_TOTAL - cost));
    assert.equal(await analyzedEvents(org, call.call_sid), 1);
    assert.deepEqual((await getCall(org, call.call_sid)).analysis, done.analysis);
  });

  test('invalid output is asked for again once with the validation errors, and the valid answer is stored', async () => {
    const { org, llm, agentId } = await setup();
    llm.script.push(text(INVALID), text(VALID));
    const call = await finishedCall(org, agentId, { transcript: TRANSCRIPT, cost_breakdown: CALL_COST });
    const done = await analyzed(org, call.call_sid);
    await settle();
    assert.equal(done.analysis.status, 'completed');
    assert.deepEqual(done.analysis.structured_data, VALID.structured_data);
    const [first, second] = chats(llm);
    assert.equal(chats(llm).length, 2);
    const messages = second!.json!.messages as Array<{ role: string; content: string }>;
    assert.equal(messages.length, (first!.json!.messages as unknown[]).length + 2);
    assert.equal(messages.at(-2)!.content, JSON.stringify(INVALID), 'the invalid answer is shown back');
    assert.match(messages.at(-1)!.content, /structured_data\/booked/);
    assert.match(messages.at(-1)!.content, /structured_data\/party_size/);
    const cost = costOf(llm.usage);
    assert.equal(done.cost_breakdown.analysis, cost);
    assert.equal((await analysisRows(org, call.call_sid)).length, 1);
    assert.equal(await balanceOf(org.orgId), round4(GRANT - CALL_TOTAL - cost));
    assert.equal(await analyzedEvents(org, call.call_sid), 1);
  });

  test('output invalid twice is stored failed with the errors, never the invalid data', async () => {
    const { org, llm, agentId } = await setup();
    llm.script.push(text(INVALID), { text: 'Sure! The caller booked a table.' });
    const call = await finishedCall(org, agentId, { transcript: TRANSCRIPT, cost_breakdown: CALL_COST });
    const done = await analyzed(org, call.call_sid);
    await settle();
    const { analysis } = done;
    assert.equal(analysis.status, 'failed');
    assert.deepEqual([analysis.summary, analysis.success, analysis.sentiment, analysis.structured_data], [null, null, null, null]);
    assert.match(analysis.error, /not JSON/);
    assert.equal(chats(llm).length, 2);
    const stored = await sql(`SELECT analysis FROM calls WHERE client_id = $1 AND call_sid = $2`, [org.orgId, call.call_sid]);
    assert.ok(!JSON.stringify(stored[0].analysis).includes('"party_size":0'), 'nothing of the invalid output is kept');
    // The tokens were used: the two requests are charged once.
    const cost = costOf(llm.usage);
    assert.equal(done.cost_breakdown.analysis, cost);
    assert.equal((await analysisRows(org, call.call_sid)).length, 1);
    assert.equal(await analyzedEvents(org, call.call_sid), 1);
  });

  test('a model that keeps failing is retried by the job, then the analysis is failed; nothing is charged', async () => {
    const { config } = await testEnv();
    const { org, llm, agentId } = await setup();
    for (let i = 0; i <= config.jobs.retryLimit; i++) llm.failNext({ status: 500 });
    const call = await finishedCall(org, agentId, { transcript: TRANSCRIPT, cost_breakdown: CALL_COST });
    const done = await analyzed(org, call.call_sid);
    await settle();
    assert.equal(done.analysis.status, 'failed');
    assert.match(done.analysis.error, /HTTP 500/);
    assert.equal(chats(llm).length, config.jobs.retryLimit + 1, 'one request per attempt');
    assert.equal(done.cost_breakdown.analysis, undefined);
    assert.equal(done.total_cost, CALL_TOTAL);
    assert.equal((await analysisRows(org, call.call_sid)).length, 0);
    assert.equal(await balanceOf(org.orgId), round4(GRANT - CALL_TOTAL));
    assert.equal(await analyzedEvents(org, call.call_sid), 1);
  });

  test('every end path queues it: a call the platform ended takes its analysis from the runtime\'s late report, and the late report keeps its cost', async () => {
    const { services, database } = await testEnv();
    const { org, llm, agentId } = await setup();
    const platformEnds = (callSid: string) => transaction(database.db, (tx) => services.calls.applyReport(tx, org.orgId, callSid, { status: 'completed', end_reason: 'user_hangup' }));
    // 1. Ended by the platform (the carrier's status callback) with no transcript: nothing to analyze until the runtime's report brings it.
    llm.script.push(text(VALID));
    const first = await createCall(org, agentId, { status: 'in_progress' });
    await platformEnds(first.call_sid);
    await settle();
    assert.equal((await getCall(org, first.call_sid)).analysis, null);
    assert.equal((await patchCall(org, first.call_sid, { status: 'completed', end_reason: 'user_hangup', transcript: TRANSCRIPT, cost_breakdown: CALL_COST })).statusCode, 200);
    const late = await analyzed(org, first.call_sid);
    assert.equal(late.analysis.status, 'completed');
    // 2. The transcript came with running reports, the platform ended the call (analyzed then); the late report queues nothing more and keeps the analysis's cost.
    llm.script.push(text(VALID), text(VALID));
    const second = await createCall(org, agentId, { status: 'in_progress' });
    assert.equal((await patchCall(org, second.call_sid, { transcript: TRANSCRIPT })).statusCode, 200);
    await platformEnds(second.call_sid);
    const before = await analyzed(org, second.call_sid);
    const analysisCost = before.cost_breakdown.analysis;
    assert.ok(analysisCost > 0);
    assert.equal((await patchCall(org, second.call_sid, { status: 'completed', end_reason: 'user_hangup', transcript: TRANSCRIPT, cost_breakdown: CALL_COST })).statusCode, 200);
    await settle();
    const after = await getCall(org, second.call_sid);
    assert.equal(after.cost_breakdown.analysis, analysisCost);
    assert.equal(after.total_cost, round4(CALL_TOTAL + analysisCost));
    assert.equal(chats(llm).length, 2, 'one analysis per call');
    for (const call of [first, second]) {
      assert.equal((await analysisRows(org, call.call_sid)).length, 1);
      assert.equal(await analyzedEvents(org, call.call_sid), 1);
    }
    // The ledger holds each call's cost and each analysis once: the balance computed from the calls' totals.
    assert.equal(await balanceOf(org.orgId), round4(GRANT - late.total_cost - after.total_cost));
  });

  test('no analysis without a transcript, nor for a version whose analysis is not enabled', async () => {
    const { org, llm, agentId } = await setup();
    const silent = await finishedCall(org, agentId, { cost_breakdown: CALL_COST });
    const plain = await setup(null);
    const other = await finishedCall(plain.org, plain.agentId, { transcript: TRANSCRIPT, cost_breakdown: CALL_COST });
    await settle();
    assert.equal((await getCall(org, silent.call_sid)).analysis, null);
    assert.equal((await getCall(plain.org, other.call_sid)).analysis, null);
    assert.equal(chats(llm).length + chats(plain.llm).length, 0);
  });

  test('a rerun uses the call\'s version by default or the one named, each charged and emitted once; Idempotency-Key runs it once', async () => {
    const { app } = await testEnv();
    const { org, llm, agentId } = await setup();
    llm.script.push(text(VALID));
    const call = await finishedCall(org, agentId, { transcript: TRANSCRIPT, cost_breakdown: CALL_COST });
    await analyzed(org, call.call_sid);
    const patched = await app.inject({ method: 'PATCH', url: `/api/agents/${agentId}`, headers: asRole(org, 'admin'), payload: { analysis: { ...ANALYSIS, summary_prompt: 'Version two: one line.', structured_data_schema: null } } });
    assert.equal(patched.json().data.version, 2);
    const v2 = { ...VALID, structured_data: null };
    llm.script.push(text(v2));
    const post = (body: object, key?: string) => app.inject({
      method: 'POST', url: `/api/calls/${call.call_sid}/analyze`, headers: asRole(org, 'agent_manager', key ? { 'idempotency-key': key } : {}), payload: body,
    });
    const first = await post({ agent_version: 2 }, 'rerun-v2');
    assert.equal(first.statusCode, 200, first.body);
    assert.equal(first.json().data.call_sid, call.call_sid);
    const again = await post({ agent_version: 2 }, 'rerun-v2');
    assert.equal(again.statusCode, 200);
    assert.equal(again.body, first.body, 'the kept response is replayed');
    const second = await analyzed(org, call.call_sid, 2);
    assert.equal(second.analysis.status, 'completed');
    assert.equal(second.analysis.structured_data, null, 'version 2 asks for no structured data');
    assert.ok(JSON.stringify(chats(llm)[1]!.json).includes('Version two: one line.'));
    await settle();
    assert.equal(chats(llm).length, 2, 'the keyed rerun ran once');
    // The default is the call's own version (1), not the latest.
    llm.script.push(text(VALID));
    assert.equal((await post({})).statusCode, 200);
    const third = await analyzed(org, call.call_sid, 1);
    assert.deepEqual(third.analysis.structured_data, VALID.structured_data);
    assert.ok(JSON.stringify(chats(llm)[2]!.json).includes('One sentence.'));
    await settle();
    const cost = eachCharged(llm.usage);
    assert.equal(third.cost_breakdown.analysis, cost);
    assert.equal((await analysisRows(org, call.call_sid)).length, 3);
    assert.equal(await balanceOf(org.orgId), round4(GRANT - CALL_TOTAL - cost));
    assert.equal(await analyzedEvents(org, call.call_sid), 3);
    // An unknown version, a call without transcript, an unknown call.
    assert.equal((await post({ agent_version: 9 })).statusCode, 404);
    const silent = await finishedCall(org, agentId, {});
    const refused = await app.inject({ method: 'POST', url: `/api/calls/${silent.call_sid}/analyze`, headers: asRole(org, 'admin'), payload: {} });
    assert.deepEqual([refused.statusCode, refused.json().code], [409, 'no_transcript']);
    assert.equal((await app.inject({ method: 'POST', url: '/api/calls/call_nope/analyze', headers: asRole(org, 'admin'), payload: {} })).statusCode, 404);
    assert.equal((await post({ agent_version: 'two' })).statusCode, 400);
  });

  test('a bulk rerun over the list\'s filters analyzes each matching call with a transcript, with progress', async () => {
    const { app } = await testEnv();
    const { org, llm, agentId } = await setup({ ...ANALYSIS, enabled: false });
    const otherAgent = await createAgent(org, { llm_provider: 'openai', llm_model: 'gpt-test', analysis: ANALYSIS });
    const matching = [];
    for (let i = 0; i < 3; i++) matching.push(await finishedCall(org, agentId, { transcript: TRANSCRIPT, cost_breakdown: CALL_COST }));
    await finishedCall(org, agentId, { cost_breakdown: CALL_COST }); // no transcript: nothing to analyze
    llm.script.push(text(VALID)); // the other agent's call is analyzed as it ends
    const elsewhere = await finishedCall(org, otherAgent.agent_id, { transcript: TRANSCRIPT, cost_breakdown: CALL_COST });
    await analyzed(org, elsewhere.call_sid);
    llm.script.push(text(VALID), text(VALID), text(VALID));
    const headers = asRole(org, 'admin', { 'idempotency-key': 'bulk-1' });
    const started = await app.inject({ method: 'POST', url: '/api/calls/analyze', headers, payload: { agent_id: agentId } });
    assert.equal(started.statusCode, 200, started.body);
    const jobId = started.json().data.job_id;
    assert.match(jobId, /^caj_[a-f0-9]{12}$/);
    const replay = await app.inject({ method: 'POST', url: '/api/calls/analyze', headers, payload: { agent_id: agentId } });
    assert.equal(replay.json().data.job_id, jobId);
    const progress = await waitFor('the bulk job', async () => {
      const res = await app.inject({ url: `/api/calls/analyze/${jobId}`, headers: asRole(org, 'agent_manager') });
      assert.equal(res.statusCode, 200, res.body);
      const data = res.json().data;
      assert.equal(data.completed + data.failed + data.pending, data.total);
      return data.status === 'completed' ? data : undefined;
    });
    assert.deepEqual([progress.total, progress.completed, progress.failed, progress.pending], [3, 3, 0, 0]);
    for (const call of matching) {
      const done = await getCall(org, call.call_sid);
      assert.equal(done.analysis.status, 'completed');
      assert.equal(await analyzedEvents(org, call.call_sid), 1);
      assert.equal((await analysisRows(org, call.call_sid)).length, 1);
    }
    assert.equal(await analyzedEvents(org, elsewhere.call_sid), 1, 'the other agent\'s call is not in the job');
    assert.equal(chats(llm).length, 4);
    assert.equal(await balanceOf(org.orgId), round4(GRANT - 5 * CALL_TOTAL - eachCharged(llm.usage)));
    const bad = await app.inject({ method: 'POST', url: '/api/calls/analyze', headers: asRole(org, 'admin'), payload: { from: 'yesterday' } });
    assert.equal(bad.statusCode, 400);
    assert.equal((await app.inject({ url: '/api/calls/analyze/caj_000000000000', headers: asRole(org, 'admin') })).statusCode, 404);
  });
});

// Permissions and isolation of the new routes (another organization's call or job: 404).
async function callWithTranscript(org: TestOrg): Promise<string> {
  const agent = await createAgent(org, { llm_provider: 'openai' });
  return (await finishedCall(org, agent.agent_id, { transcript: TRANSCRIPT })).call_sid;
}
runAuthMatrix({
  method: 'POST', route: '/api/calls/{call_sid}/analyze', permission: 'calls:analyze', foreignStatus: 404,
  path: async (org) => `/api/calls/${await callWithTranscript(org)}/analyze`, body: () => ({}),
});
runAuthMatrix({ method: 'POST', route: '/api/calls/analyze', permission: 'calls:analyze', path: () => '/api/calls/analyze', body: () => ({ status: 'completed' }) });
runAuthMatrix({
  method: 'GET', route: '/api/calls/analyze/{job_id}', permission: 'calls:analyze', foreignStatus: 404,
  path: async (org) => {
    const { app } = await testEnv();
    const res = await app.inject({ method: 'POST', url: '/api/calls/analyze', headers: asRole(org, 'admin'), payload: {} });
    return `/api/calls/analyze/${res.json().data.job_id}`;
  },
});

before(async () => {
  await testEnv();
});
