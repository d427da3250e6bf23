import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { startCarrierStandIn, type CarrierStandIn } from './helpers/carrier-standin.ts';
import { buildTestApp, testConfig, testEnv } from './helpers/env.ts';
import { asRole, createOrg, type TestOrg } from './helpers/fixtures.ts';
import { balanceOf, grantCredits } from './helpers/calls.ts';
import { setConcurrencyLimit } from './helpers/limits.ts';
import { carrierCallSid, carrierNumber, children, parseTwiml, postCarrierForm } from './helpers/telephony.ts';

/** extensions.md §2: the carrier's voice and status webhooks. */
const PUBLIC = 'http://127.0.0.1:3000';
const VOICE_URL = `${PUBLIC}/api/telephony/carrier_a/voice`;
const STATUS_URL = `${PUBLIC}/api/telephony/carrier_a/status`;
// A runtime address with characters XML must escape (in its path: a query string is refused at start):
// the TwiML must still be well-formed and carry it exactly.
const STREAM_URL = 'wss://runtime.example.test/stream/tenant=a&mode="live"<1>';

describe('telephony: carrier_a voice and status webhooks', () => {
  let carrier: CarrierStandIn;
  let app: FastifyInstance;
  let sipApp: FastifyInstance;
  before(async () => {
    carrier = await startCarrierStandIn();
    const { tmpDir } = await testEnv();
    app = await buildTestApp(testConfig(tmpDir, { CARRIER_A_API_URL: carrier.url, PUBLIC_BASE_URL: PUBLIC, RUNTIME_STREAM_URL: STREAM_URL }));
    sipApp = await buildTestApp(testConfig(tmpDir, { CARRIER_A_API_URL: carrier.url, PUBLIC_BASE_URL: PUBLIC, RUNTIME_SIP_URI: 'sip:agent@runtime.example.test' }));
  });
  after(async () => {
    await app?.close();
    await sipApp?.close();
    await carrier?.close();
  });

  const token = () => carrier.account.token;
  const voice = (params: Record<string, string>, signature?: string | null, target = app) =>
    postCarrierForm(target, '/api/telephony/carrier_a/voice', VOICE_URL, token(), params, signature);
  const status = (params: Record<string, string>, signature?: string | null) =>
    postCarrierForm(app, '/api/telephony/carrier_a/status', STATUS_URL, token(), params, signature);
  const inbound = (to: string, callSid = carrierCallSid()) => ({
    CallSid: callSid, AccountSid: carrier.account.sid, From: '+14155550199', To: to, CallStatus: 'ringing', Direction: 'inbound', ApiVersion: '2010-04-01',
  });
  const calls = async (org: TestOrg) => (await app.inject({ url: '/api/calls', headers: asRole(org, 'user') })).json().data as Array<Record<string, any>>;
  const getCall = async (org: TestOrg, sid: string) => (await app.inject({ url: `/api/calls/${sid}`, headers: asRole(org, 'user') })).json().data;

  test('a signed inbound call: the call is created for the number\'s agent and TwiML connects it to RUNTIME_STREAM_URL', async () => {
    const org = await createOrg();
    const { phoneNumber, agentId } = await carrierNumber(app, carrier, org);
    // The import pointed the number at both webhooks.
    assert.deepEqual([carrier.numbers.get(phoneNumber)!.voiceUrl, carrier.numbers.get(phoneNumber)!.statusCallback], [VOICE_URL, STATUS_URL]);
    const res = await voice(inbound(phoneNumber));
    assert.equal(res.statusCode, 200, res.body);
    assert.match(String(res.headers['content-type']), /^text\/xml/);
    const doc = parseTwiml(res.body);
    const [connect] = children(doc.documentElement, 'Connect');
    const [stream] = children(connect!, 'Stream');
    assert.equal(stream!.getAttribute('url'), STREAM_URL);
    const parameters = Object.fromEntries(children(stream!, 'Parameter').map((p) => [p.getAttribute('name'), p.getAttribute('value')]));
    const made = await calls(org);
    assert.equal(made.length, 1);
    // The call token (extensions.md §10) is checked by test/voice-runtime.test.ts.
    assert.match(parameters.token ?? '', /^[\w-]+\.[\w-]+\.[\w-]+$/);
    assert.deepEqual({ ...parameters, token: undefined }, { call_sid: made[0]!.call_sid, agent_id: agentId, token: undefined });
    assert.deepEqual([made[0]!.call_type, made[0]!.status, made[0]!.to_number, made[0]!.from_number, made[0]!.agent_name], ['inbound', 'ringing', phoneNumber, '+14155550199', 'Front desk']);
  });

  test('RUNTIME_SIP_URI: <Dial><Sip> to the runtime with the call sid and agent id as SIP headers', async () => {
    const org = await createOrg();
    const { phoneNumber, agentId } = await carrierNumber(app, carrier, org);
    const res = await voice(inbound(phoneNumber), undefined, sipApp);
    assert.equal(res.statusCode, 200, res.body);
    const [dial] = children(parseTwiml(res.body).documentElement, 'Dial');
    const [sip] = children(dial!, 'Sip');
    const uri = new URL(sip!.textContent!);
    const sid = (await calls(org))[0]!.call_sid;
    assert.equal(`${uri.protocol}${uri.pathname}`, 'sip:agent@runtime.example.test');
    const headers = Object.fromEntries(uri.searchParams);
    assert.match(headers['X-Call-Token'] ?? '', /^[\w-]+\.[\w-]+\.[\w-]+$/);
    assert.deepEqual({ ...headers, 'X-Call-Token': undefined }, { 'X-Call-Sid': sid, 'X-Agent-Id': agentId, 'X-Call-Token': undefined });
  });

  test('a bad, missing or foreign signature is 403 and creates nothing; so is a changed parameter', async () => {
    const org = await createOrg();
    const { phoneNumber } = await carrierNumber(app, carrier, org);
    const params = inbound(phoneNumber);
    for (const signature of [null, '', 'bm90IGEgc2lnbmF0dXJl', (await import('./helpers/telephony.ts')).signCarrierRequest('another-token', VOICE_URL, params)]) {
      const res = await voice(params, signature);
      assert.equal(res.statusCode, 403, `signature ${signature}`);
      assert.equal(res.json().code, 'signature_invalid');
    }
    const signed = (await import('./helpers/telephony.ts')).signCarrierRequest(token(), VOICE_URL, params);
    const changed = await voice({ ...params, From: '+14155550198' }, signed);
    assert.equal(changed.statusCode, 403);
    const wrongUrl = (await import('./helpers/telephony.ts')).signCarrierRequest(token(), `${PUBLIC}/elsewhere`, params);
    assert.equal((await voice(params, wrongUrl)).statusCode, 403);
    assert.deepEqual(await calls(org), []);
    const statusRes = await status({ CallSid: params.CallSid, AccountSid: carrier.account.sid, To: phoneNumber, From: params.From, CallStatus: 'completed' }, 'x');
    assert.equal(statusRes.statusCode, 403);
  });

  test('<Reject/> for an unknown number and for a number without an agent; no call is made', async () => {
    const org = await createOrg();
    const { phoneNumber } = await carrierNumber(app, carrier, org, { agent: false });
    for (const to of ['+19995550000', phoneNumber]) {
      const res = await voice(inbound(to));
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(children(parseTwiml(res.body).documentElement).map((e) => e.nodeName), ['Reject']);
    }
    assert.deepEqual(await calls(org), []);
  });

  test('over the concurrency limit: <Reject/>, and the call is recorded failed (error), not billed', async () => {
    const org = await createOrg();
    const { phoneNumber } = await carrierNumber(app, carrier, org);
    await setConcurrencyLimit(org.orgId, 0);
    const res = await voice(inbound(phoneNumber));
    assert.deepEqual(children(parseTwiml(res.body).documentElement).map((e) => e.nodeName), ['Reject']);
    const made = await calls(org);
    assert.equal(made.length, 1);
    assert.deepEqual([made[0]!.status, made[0]!.end_reason, made[0]!.billing_status], ['failed', 'error', 'waived']);
  });

  test('the carrier retrying one voice request (also concurrently) gets the same call', async () => {
    const org = await createOrg();
    const { phoneNumber } = await carrierNumber(app, carrier, org);
    const params = inbound(phoneNumber);
    const answers = await Promise.all([voice(params), voice(params), voice(params)]);
    answers.push(await voice(params));
    const made = await calls(org);
    assert.equal(made.length, 1);
    for (const res of answers) {
      assert.equal(res.statusCode, 200, res.body);
      const [stream] = children(children(parseTwiml(res.body).documentElement, 'Connect')[0]!, 'Stream');
      assert.equal(children(stream!, 'Parameter')[0]!.getAttribute('value'), made[0]!.call_sid);
    }
  });

  test('status callbacks: ringing → in-progress → completed with CallDuration; repeated, late and concurrent callbacks bill once', async () => {
    const org = await createOrg();
    await grantCredits(org.orgId, 100);
    const { phoneNumber } = await carrierNumber(app, carrier, org);
    const params = inbound(phoneNumber);
    await voice(params);
    const sid = (await calls(org))[0]!.call_sid;
    const callback = (callStatus: string, extra: Record<string, string> = {}) =>
      status({ CallSid: params.CallSid, AccountSid: carrier.account.sid, From: params.From, To: phoneNumber, Direction: 'inbound', CallStatus: callStatus, ...extra });

    assert.equal((await callback('in-progress')).statusCode, 200);
    assert.equal((await getCall(org, sid)).status, 'in_progress');
    // Late: a ringing after in-progress changes nothing.
    assert.equal((await callback('ringing')).statusCode, 200);
    assert.equal((await getCall(org, sid)).status, 'in_progress');
    // The runtime reports its costs while the call runs (the carrier's final status then bills them).
    const report = await app.inject({
      method: 'PATCH', url: `/api/calls/${sid}`, headers: asRole(org, 'agent_manager'),
      payload: { cost_breakdown: { stt: 1, llm: 2, tts: 1, telephony: 1.5, platform: 0.5 } },
    });
    assert.equal(report.statusCode, 200, report.body);

    const finals = await Promise.all(Array.from({ length: 8 }, () => callback('completed', { CallDuration: '42' })));
    assert.ok(finals.every((r) => r.statusCode === 200), finals.map((r) => r.statusCode).join(','));
    assert.equal((await callback('completed', { CallDuration: '42' })).statusCode, 200);
    assert.equal((await callback('failed')).statusCode, 200);
    const ended = await getCall(org, sid);
    assert.deepEqual([ended.status, ended.duration_seconds, ended.total_cost, ended.billing_status], ['completed', 42, 6, 'billed']);
    assert.equal(await balanceOf(org.orgId), 94);
    const { database } = await testEnv();
    const ledger = await database.pool.query("SELECT count(*)::int AS n FROM credit_transactions WHERE client_id = $1 AND kind = 'call_usage'", [org.orgId]);
    assert.equal(ledger.rows[0].n, 1);
    // Counted once in the analytics of the day it started.
    const day = ended.start_time.slice(0, 10);
    const daily = (await app.inject({ url: `/api/analytics/calls/daily?start_date=${day}&end_date=${day}`, headers: asRole(org, 'user') })).json().data;
    assert.deepEqual([daily.daily[0].calls, daily.daily[0].cost_credits, daily.daily[0].total_duration_seconds], [1, 6, 42]);
  });

  test('out of order: completed arrives first; the ringing and in-progress after it change nothing', async () => {
    const org = await createOrg();
    const { phoneNumber } = await carrierNumber(app, carrier, org);
    const params = inbound(phoneNumber);
    await voice(params);
    const sid = (await calls(org))[0]!.call_sid;
    const base = { CallSid: params.CallSid, AccountSid: carrier.account.sid, From: params.From, To: phoneNumber };
    assert.equal((await status({ ...base, CallStatus: 'completed', CallDuration: '30' })).statusCode, 200);
    for (const late of ['ringing', 'in-progress', 'busy']) assert.equal((await status({ ...base, CallStatus: late })).statusCode, 200);
    const ended = await getCall(org, sid);
    assert.deepEqual([ended.status, ended.duration_seconds, ended.billing_status], ['completed', 30, 'waived']);
    // Never answered as far as the platform knows: it started CallDuration seconds before it ended.
    assert.equal(Date.parse(ended.end_time) - Date.parse(ended.start_time), 30_000);
  });

  test('busy, no-answer, canceled and failed map onto the call; failed ends with end_reason error', async () => {
    const org = await createOrg();
    const { phoneNumber } = await carrierNumber(app, carrier, org);
    for (const [carrierStatus, expected, reason] of [['busy', 'busy', null], ['no-answer', 'no_answer', null], ['canceled', 'canceled', null], ['failed', 'failed', 'error']] as const) {
      const params = inbound(phoneNumber);
      await voice(params);
      const sid = (await calls(org)).find((c) => c.status === 'ringing')!.call_sid;
      assert.equal((await status({ CallSid: params.CallSid, AccountSid: carrier.account.sid, To: phoneNumber, From: params.From, CallStatus: carrierStatus })).statusCode, 200);
      const ended = await getCall(org, sid);
      assert.deepEqual([ended.status, ended.end_reason], [expected, reason]);
    }
  });

  test("a status callback signed for another organization's call changes nothing of it", async () => {
    const [a, b] = [await createOrg(), await createOrg()];
    const numberA = (await carrierNumber(app, carrier, a)).phoneNumber;
    const numberB = (await carrierNumber(app, carrier, b)).phoneNumber;
    const params = inbound(numberA);
    await voice(params);
    // The stand-in account is shared by both organizations, so B's token is the same: B's number in To does not move A's call.
    const res = await status({ CallSid: carrierCallSid(), AccountSid: carrier.account.sid, To: numberB, From: params.From, CallStatus: 'completed' });
    assert.equal(res.statusCode, 200);
    assert.equal((await calls(a))[0]!.status, 'ringing');
    assert.deepEqual(await calls(b), []);
  });
  test("another organization's carrier sid: B's signed voice and status requests never name, change or end A's call", async () => {
    const [a, b] = [await createOrg(), await createOrg()];
    const numberA = (await carrierNumber(app, carrier, a)).phoneNumber;
    const numberB = (await carrierNumber(app, carrier, b)).phoneNumber;
    const paramsA = inbound(numberA);
    assert.equal((await voice(paramsA)).statusCode, 200);
    const before = await getCall(a, (await calls(a))[0]!.call_sid);
    const agentA = before.agent_id as string;
    // B signs (with its own integration's token) a request for its own number carrying A's CallSid.
    for (const target of [app, sipApp]) {
      const res = await voice(inbound(numberB, paramsA.CallSid), undefined, target);
      assert.equal(res.statusCode, 200, res.body);
      assert.ok(!res.body.includes(before.call_sid) && !res.body.includes(agentA), res.body);
    }
    const noRuntime = await buildTestApp(testConfig((await testEnv()).tmpDir, { CARRIER_A_API_URL: carrier.url, PUBLIC_BASE_URL: PUBLIC }));
    try {
      const res = await voice(inbound(numberB, paramsA.CallSid), undefined, noRuntime);
      assert.equal(res.statusCode, 200, res.body);
      assert.ok(!res.body.includes(before.call_sid) && !res.body.includes(agentA), res.body);
    } finally {
      await noRuntime.close();
    }
    // The same sid in B's status callbacks (To: B's number, signed by B's integration).
    for (const callStatus of ['in-progress', 'completed', 'failed']) {
      const res = await status({ CallSid: paramsA.CallSid, AccountSid: carrier.account.sid, From: paramsA.From, To: numberB, Direction: 'inbound', CallStatus: callStatus, CallDuration: '7' });
      assert.equal(res.statusCode, 200, res.body);
    }
    assert.deepEqual(await getCall(a, before.call_sid), before);
    assert.equal((await calls(a)).length, 1);
    // A's own carrier still moves A's call.
    assert.equal((await status({ CallSid: paramsA.CallSid, AccountSid: carrier.account.sid, From: paramsA.From, To: numberA, CallStatus: 'in-progress' })).statusCode, 200);
    assert.equal((await getCall(a, before.call_sid)).status, 'in_progress');
  });
});
