import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { toneWav } from '../src/modules/calls/recordings/audio.ts';
import { startCarrierStandIn, type CarrierStandIn } from './helpers/carrier-standin.ts';
import { buildTestApp, testConfig, testEnv } from './helpers/env.ts';
import { asRole, createOrg, type TestOrg } from './helpers/fixtures.ts';
import { balanceOf, grantCredits } from './helpers/calls.ts';
import { carrierCallSid, carrierNumber, children, parseTwiml, postCarrierForm } from './helpers/telephony.ts';

/**
 * extensions.md §10: "The carrier's status callback and the runtime's report may arrive in any
 * order; the call is billed once and keeps what each reported." Every order ends with the same call,
 * balance, ledger and usage analytics.
 */
const PUBLIC = 'https://sb.example.test';
const VOICE_URL = `${PUBLIC}/api/telephony/carrier_a/voice`;
const STATUS_URL = `${PUBLIC}/api/telephony/carrier_a/status`;
const bearer = (org: TestOrg, token: string) => ({ authorization: `Bearer ${token}`, 'x-organization-id': org.orgId });

const LATENCIES = [420, 610, 380];
const TRANSCRIPT = [
  { role: 'agent', text: 'Hello, Acme.', start_seconds: 0, end_seconds: 1.2, interrupted: false, latency: { stt_ms: null, llm_first_token_ms: null, tts_first_byte_ms: 90, total_ms: LATENCIES[0] } },
  { role: 'user', text: 'Where is my order?', start_seconds: 2, end_seconds: 3.1 },
  { role: 'agent', text: 'It shipped.', start_seconds: 3.8, end_seconds: 5, interrupted: false, latency: { stt_ms: 150, llm_first_token_ms: 260, tts_first_byte_ms: 120, total_ms: LATENCIES[1] } },
  { role: 'user', text: 'Thanks.', start_seconds: 6, end_seconds: 6.5 },
  { role: 'agent', text: 'Sorry, the assistant', start_seconds: 7, end_seconds: 8, interrupted: true, latency: { stt_ms: 140, llm_first_token_ms: 150, tts_first_byte_ms: 60, total_ms: LATENCIES[2] } },
];
const COST = { stt: 1, llm: 2, tts: 3, telephony: 1.5, platform: 0.5 }; // 8 credits
const ERROR = { provider: 'openai', code: 'provider_failed', message: 'the LLM answered 500' };
const FINAL = {
  status: 'failed', end_reason: 'error', error: ERROR, duration_seconds: 42, transcript: TRANSCRIPT, cost_breakdown: COST,
  latency_p50_ms: 420, latency_p95_ms: 610,
};

/** The nearest-rank percentile of the exact values (the test's own computation). */
function exactPercentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(1, Math.ceil(p * sorted.length)) - 1]!;
}

describe("voice runtime: the carrier's status and the runtime's report in any order", () => {
  let carrier: CarrierStandIn;
  let app: FastifyInstance;
  before(async () => {
    carrier = await startCarrierStandIn();
    const { tmpDir } = await testEnv();
    app = await buildTestApp(testConfig(tmpDir, { CARRIER_A_API_URL: carrier.url, PUBLIC_BASE_URL: PUBLIC }));
  });
  after(async () => {
    await app?.close();
    await carrier?.close();
  });

  type Order = 'runtime_first' | 'carrier_first' | 'carrier_first_after_a_running_cost';

  /** An inbound call answered by the runtime, ended by both the runtime's report and the carrier's callback in `order`. */
  async function endedCall(order: Order, options: { recording?: boolean } = {}) {
    const org = await createOrg();
    await grantCredits(org.orgId, 100);
    const { phoneNumber, agentId } = await carrierNumber(app, carrier, org);
    if (options.recording) {
      const res = await app.inject({ method: 'PATCH', url: `/api/agents/${agentId}`, headers: asRole(org, 'admin'), payload: { recording_enabled: true } });
      assert.equal(res.statusCode, 200, res.body);
    }
    const params = { CallSid: carrierCallSid(), AccountSid: carrier.account.sid, From: '+14155550199', To: phoneNumber, CallStatus: 'ringing', Direction: 'inbound' };
    const answer = parseTwiml((await postCarrierForm(app, '/api/telephony/carrier_a/voice', VOICE_URL, carrier.account.token, params)).body);
    const stream = children(children(answer.documentElement, 'Connect')[0]!, 'Stream')[0]!;
    const p = Object.fromEntries(children(stream, 'Parameter').map((n) => [n.getAttribute('name')!, n.getAttribute('value')!]));
    const patch = (payload: Record<string, unknown>) => app.inject({ method: 'PATCH', url: `/api/calls/${p.call_sid}`, headers: bearer(org, p.token!), payload });
    const running = order === 'carrier_first_after_a_running_cost' ? { cost_breakdown: { stt: 0.5, llm: 1, tts: 0.5, telephony: 0, platform: 0 } } : {};
    assert.equal((await patch({ status: 'in_progress', ...running })).statusCode, 200);

    const carrierEnds = async () => {
      const res = await postCarrierForm(app, '/api/telephony/carrier_a/status', STATUS_URL, carrier.account.token, { ...params, CallStatus: 'completed', CallDuration: '44' });
      assert.equal(res.statusCode, 200, res.body);
    };
    const runtimeReports = async () => {
      const res = await patch(FINAL);
      assert.equal(res.statusCode, 200, res.body);
    };
    if (order === 'runtime_first') {
      await runtimeReports();
      await carrierEnds();
    } else {
      await carrierEnds();
      const byCarrier = (await app.inject({ url: `/api/calls/${p.call_sid}`, headers: asRole(org, 'user') })).json().data;
      assert.deepEqual([byCarrier.status, byCarrier.duration_seconds, byCarrier.billing_status],
        ['completed', 44, order === 'carrier_first' ? 'waived' : 'billed'], 'the carrier ended the call with what was known');
      await runtimeReports();
    }
    // One final report through the API: a second one is refused, whatever the order.
    const again = await patch({ status: 'completed', end_reason: 'user_hangup' });
    assert.equal(again.statusCode, 409);
    assert.equal(again.json().code, 'call_finalized');
    return { org, callSid: p.call_sid!, token: p.token! };
  }

  async function outcome(org: TestOrg, callSid: string) {
    const call = (await app.inject({ url: `/api/calls/${callSid}`, headers: asRole(org, 'user') })).json().data;
    const ledger = (await app.inject({ url: '/api/billing/transactions?page_size=100', headers: asRole(org, 'user') })).json().data
      .filter((t: { kind: string }) => t.kind === 'call_usage');
    const now = Date.now();
    const usage = (query: string) => app.inject({
      url: `/api/analytics/usage?start=${new Date(now - 86_400_000).toISOString()}&end=${new Date(now + 86_400_000).toISOString()}&granularity=hour${query}`,
      headers: asRole(org, 'user'),
    }).then((res) => { assert.equal(res.statusCode, 200, res.body); return res.json().data; });
    return { call, ledger, balance: await balanceOf(org.orgId), usage: await usage(''), byStatus: await usage('&group_by=status&metrics=calls,cost') };
  }

  for (const order of ['runtime_first', 'carrier_first', 'carrier_first_after_a_running_cost'] as const) {
    test(`${order}: the call keeps the runtime's report, is billed 8 credits once, counted once`, async () => {
      const { org, callSid } = await endedCall(order);
      const { call, ledger, balance, usage, byStatus } = await outcome(org, callSid);
      assert.deepEqual(
        [call.status, call.end_reason, call.error, call.duration_seconds, call.total_cost, call.cost_breakdown, call.latency_p50_ms, call.latency_p95_ms, call.billing_status],
        ['failed', 'error', ERROR, 42, 8, COST, 420, 610, 'billed']);
      assert.deepEqual(call.transcript, TRANSCRIPT);
      assert.equal(balance, 92, '100 credits less the call’s 8, once');
      // The ledger holds the call's cost once: one row, or the carrier's charge and the difference.
      assert.equal(ledger.reduce((sum: number, t: { amount: number }) => sum + t.amount, 0), -8);
      assert.ok(ledger.every((t: { source_id: string }) => t.source_id.startsWith(callSid)));
      assert.equal(ledger.length, order === 'carrier_first_after_a_running_cost' ? 2 : 1);
      assert.equal(usage.totals.calls, 1);
      assert.equal(usage.totals.cost, 8);
      assert.equal(usage.totals.duration_seconds, 42);
      for (const [metric, p] of [['latency_p50', 0.5], ['latency_p95', 0.95]] as const) {
        const exact = exactPercentile(LATENCIES, p);
        assert.ok(Math.abs(usage.totals[metric] - exact) <= 0.05 * exact, `${metric} ${usage.totals[metric]} vs ${exact}`);
      }
      // The carrier's `completed` was replaced by the runtime's `failed`: no group is left with it.
      assert.deepEqual(byStatus.series.map((s: { group: unknown }) => s.group), [{ status: 'failed' }]);
      assert.deepEqual(byStatus.totals, { calls: 1, cost: 8 });
    });
  }

  test("the recording is uploaded with the call's token after the carrier ended the call", async () => {
    const { org, callSid, token } = await endedCall('carrier_first', { recording: true });
    const wav = toneWav(1, 300);
    const res = await app.inject({ method: 'PUT', url: `/api/calls/${callSid}/recording`, headers: { ...bearer(org, token), 'content-type': 'audio/wav' }, payload: wav });
    assert.ok(res.statusCode === 200 || res.statusCode === 201, res.body);
    const call = (await app.inject({ url: `/api/calls/${callSid}`, headers: asRole(org, 'user') })).json().data;
    assert.equal(call.recording_bytes, wav.length);
    // The token is its own call's only: another call's recording is refused.
    const { callSid: otherSid } = await endedCall('carrier_first', { recording: true });
    const other = await app.inject({ method: 'PUT', url: `/api/calls/${otherSid}/recording`, headers: { ...bearer(org, token), 'content-type': 'audio/wav' }, payload: wav });
    assert.ok(other.statusCode === 403 || other.statusCode === 404, other.body);
  });

  test("isolation: a call token is refused on every runtime route for another organization's call, and under another organization's id", async () => {
    const mine = await endedCall('runtime_first');
    const theirs = await endedCall('runtime_first');
    const routes = (sid: string) => [
      { method: 'GET' as const, url: `/api/runtime/calls/${sid}` },
      { method: 'PATCH' as const, url: `/api/calls/${sid}`, payload: { turn_count: 1 } },
      { method: 'PUT' as const, url: `/api/calls/${sid}/recording`, payload: toneWav(0.2, 300), headers: { 'content-type': 'audio/wav' } },
      { method: 'POST' as const, url: `/api/runtime/calls/${sid}/tools/lookup`, payload: { arguments: {} } },
    ];
    const before = (await app.inject({ url: `/api/calls/${theirs.callSid}`, headers: asRole(theirs.org, 'user') })).json().data;
    for (const [label, org, sid] of [['their call under my id', mine.org, theirs.callSid], ['their call under their id', theirs.org, theirs.callSid], ['my call under their id', theirs.org, mine.callSid]] as const) {
      for (const route of routes(sid)) {
        const res = await app.inject({ method: route.method, url: route.url, headers: { ...bearer(org, mine.token), ...(route.headers ?? {}) }, ...(route.payload ? { payload: route.payload } : {}) });
        assert.ok(res.statusCode === 403 || res.statusCode === 404, `${label} ${route.method} ${route.url}: ${res.statusCode} ${res.body}`);
      }
    }
    const search = await app.inject({ method: 'POST', url: '/api/knowledge-base/search', headers: bearer(theirs.org, mine.token), payload: { query: 'orders' } });
    assert.equal(search.statusCode, 403, search.body);
    const after = (await app.inject({ url: `/api/calls/${theirs.callSid}`, headers: asRole(theirs.org, 'user') })).json().data;
    assert.deepEqual(after, before, 'their call is untouched');
  });
});

