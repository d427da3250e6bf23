import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { startCarrierStandIn, type CarrierStandIn } from './helpers/carrier-standin.ts';
import { startLiveKitStandIn, type LiveKitStandIn } from './helpers/livekit-standin.ts';
import { buildTestApp, testConfig, testEnv } from './helpers/env.ts';
import { asRole, createAgent, createOrg, uniquePhoneNumber, type TestOrg } from './helpers/fixtures.ts';
import { runAuthMatrix } from './helpers/auth-matrix.ts';
import { balanceOf, grantCredits } from './helpers/calls.ts';
import { createOutboundNumber } from './helpers/campaigns.ts';
import { setConcurrencyLimit } from './helpers/limits.ts';
import { freePort } from './helpers/net.ts';
import { carrierNumber, children, parseTwiml, postCarrierForm } from './helpers/telephony.ts';

/** extensions.md §2: POST /api/calls/dial. */
runAuthMatrix({
  method: 'POST', route: '/api/calls/dial', path: () => '/api/calls/dial', permission: 'calls:dial',
  body: () => ({ agent_id: 'agt_000000000000', to_number: '+14155550100', from_phone_number_id: 'phon_000000000000' }),
});

const STREAM_URL = 'wss://runtime.example.test/stream';
const CALLEE = '+14155550123';

describe('dial: outbound calls through carrier_a (a stand-in that plays the call back through the webhooks)', () => {
  let carrier: CarrierStandIn;
  let app: FastifyInstance;
  let publicUrl: string;
  before(async () => {
    carrier = await startCarrierStandIn();
    const port = await freePort();
    publicUrl = `http://127.0.0.1:${port}`;
    const { tmpDir } = await testEnv();
    app = await buildTestApp(testConfig(tmpDir, {
      CARRIER_A_API_URL: carrier.url, PUBLIC_BASE_URL: publicUrl, RUNTIME_STREAM_URL: STREAM_URL, CARRIER_A_TIMEOUT_MS: '500',
    }));
    // The carrier reaches the platform over HTTP at the address it was given, as a real carrier does.
    await app.listen({ port, host: '127.0.0.1' });
  });
  after(async () => {
    await app?.close();
    await carrier?.close();
  });

  const dial = (org: TestOrg, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    app.inject({ method: 'POST', url: '/api/calls/dial', headers: asRole(org, 'agent_manager', headers), payload: body });
  const getCall = async (org: TestOrg, sid: string) => (await app.inject({ url: `/api/calls/${sid}`, headers: asRole(org, 'user') })).json().data;
  const callCount = async (org: TestOrg) => (await app.inject({ url: '/api/calls?limit=100', headers: asRole(org, 'user') })).json().data.length as number;
  const outboundOrg = async () => {
    const org = await createOrg();
    await grantCredits(org.orgId, 100);
    const number = await carrierNumber(app, carrier, org, { outbound: true });
    return { org, ...number, agentId: number.agentId! };
  };

  test('a dialled call is placed with Calls.json, answered into the runtime through the voice webhook, and ended by the status callbacks', async () => {
    const { org, phoneNumber, phoneNumberId, agentId } = await outboundOrg();
    const res = await dial(org, {
      agent_id: agentId, to_number: CALLEE, from_phone_number_id: phoneNumberId,
      metadata: { crm_id: 'lead-4711', tags: ['spring'] }, variables: { customer_name: 'Ada' },
    });
    assert.equal(res.statusCode, 200, res.body);
    const call = res.json().data;
    assert.match(call.call_sid, /^call_/);
    assert.deepEqual([call.call_type, call.status, call.to_number, call.from_number, call.agent_id], ['outbound', 'queued', CALLEE, phoneNumber, agentId]);
    assert.equal(call.agent_version, 1, 'the call records the version it runs (extensions.md §12)');
    assert.deepEqual(call.metadata, { crm_id: 'lead-4711', tags: ['spring'] });
    assert.deepEqual(call.variables, { customer_name: 'Ada' });

    // What the carrier was asked, parameter by parameter (the contract's Calls.json fields).
    const placed = carrier.placed.at(-1)!;
    const query = `?${new URLSearchParams({ org: org.orgId, call_sid: call.call_sid })}`;
    assert.deepEqual(
      { to: placed.to, from: placed.from, url: placed.url, statusCallback: placed.statusCallback },
      { to: CALLEE, from: phoneNumber, url: `${publicUrl}/api/telephony/carrier_a/voice${query}`, statusCallback: `${publicUrl}/api/telephony/carrier_a/status${query}` },
    );
    assert.deepEqual(placed.statusCallbackEvents, ['initiated', 'ringing', 'answered', 'completed']);
    const auth = carrier.requests.filter((r) => r.url.endsWith('/Calls.json')).at(-1)!.authorization;
    assert.equal(auth, `Basic ${Buffer.from(`${carrier.account.sid}:${carrier.account.token}`).toString('base64')}`);

    // The carrier plays the call; while the callee is connected the runtime reports its costs.
    const played = carrier.play(placed.sid, { result: 'answered', durationSeconds: 42, holdMs: 400 });
    const connected = Date.now() + 10_000;
    while ((await getCall(org, call.call_sid)).status !== 'in_progress') {
      assert.ok(Date.now() < connected, 'the answered call never became in_progress');
      await new Promise((r) => setTimeout(r, 20));
    }
    const report = await app.inject({
      method: 'PATCH', url: `/api/calls/${call.call_sid}`, headers: asRole(org, 'agent_manager'),
      payload: { cost_breakdown: { stt: 1, llm: 2, tts: 1, telephony: 1.5, platform: 0.5 } },
    });
    assert.equal(report.statusCode, 200, report.body);
    await played;
    // Every signed post was accepted; the voice answer connects the callee to the runtime with the call's sid and agent.
    assert.ok(placed.answers.filter((a) => a.startsWith('status')).every((a) => a === 'status 200'), placed.answers.join(', '));
    const twiml = parseTwiml(placed.answers.find((a) => a.startsWith('<'))!);
    const [stream] = children(children(twiml.documentElement, 'Connect')[0]!, 'Stream');
    assert.equal(stream!.getAttribute('url'), STREAM_URL);
    const parameters = Object.fromEntries(children(stream!, 'Parameter').map((p) => [p.getAttribute('name'), p.getAttribute('value')]));
    // The answered dial carries the call's token (extensions.md §10): for this call, accepted by its runtime route.
    const { token, ...named } = parameters as Record<string, string>;
    assert.deepEqual(named, { call_sid: call.call_sid, agent_id: agentId });
    assert.equal(JSON.parse(Buffer.from(token!.split('.')[1]!, 'base64url').toString()).sub, call.call_sid);
    const runtimeView = await app.inject({ url: `/api/runtime/calls/${call.call_sid}`, headers: { authorization: `Bearer ${token}`, 'x-organization-id': org.orgId } });
    assert.equal(runtimeView.statusCode, 200, runtimeView.body);

    // A repeated final callback (carriers retry) changes nothing.
    const repeat = { CallSid: placed.sid, AccountSid: carrier.account.sid, From: placed.from, To: placed.to, Direction: 'outbound-api', CallStatus: 'completed', CallDuration: '42' };
    assert.equal((await postCarrierForm(app, `/api/telephony/carrier_a/status${query}`, `${publicUrl}/api/telephony/carrier_a/status`, carrier.account.token, repeat)).statusCode, 200);

    const ended = await getCall(org, call.call_sid);
    assert.deepEqual([ended.status, ended.duration_seconds, ended.total_cost, ended.billing_status], ['completed', 42, 6, 'billed']);
    assert.ok(ended.start_time && ended.end_time);
    assert.equal(await balanceOf(org.orgId), 94); // 100 granted, 6 billed once
    const day = ended.start_time.slice(0, 10);
    const daily = (await app.inject({ url: `/api/analytics/calls/daily?start_date=${day}&end_date=${day}`, headers: asRole(org, 'user') })).json().data;
    assert.deepEqual([daily.daily[0].calls, daily.daily[0].cost_credits, daily.daily[0].total_duration_seconds], [1, 6, 42]);
    const events = (await app.inject({ url: '/api/events?type=call.created&type=call.ended&limit=100', headers: asRole(org, 'admin') })).json().data;
    assert.deepEqual(events.map((e: any) => e.type).sort(), ['call.created', 'call.ended']);
  });

  test('busy, no-answer and failed placements end their calls with those statuses, each once', async () => {
    const { org, phoneNumberId, agentId } = await outboundOrg();
    const expected: Record<string, string> = { busy: 'busy', 'no-answer': 'no_answer', failed: 'failed' };
    for (const [result, status] of Object.entries(expected)) {
      const res = await dial(org, { agent_id: agentId, to_number: CALLEE, from_phone_number_id: phoneNumberId });
      assert.equal(res.statusCode, 200, res.body);
      const placed = carrier.placed.at(-1)!;
      await carrier.play(placed.sid, { result: result as 'busy' });
      const call = await getCall(org, res.json().data.call_sid);
      assert.equal(call.status, status, result);
      assert.equal(call.duration_seconds, 0);
    }
    const ended = (await app.inject({ url: '/api/events?type=call.ended&limit=100', headers: asRole(org, 'admin') })).json().data;
    assert.equal(ended.length, 3);
  });

  test('a provider that refuses: 409 carrier_rejected with its message; one that does not answer: 502 carrier_unavailable; both calls failed and never charged', async () => {
    const { org, phoneNumberId, agentId } = await outboundOrg();
    const before = await balanceOf(org.orgId);
    try {
      carrier.placement = () => 'reject';
      const refused = await dial(org, { agent_id: agentId, to_number: CALLEE, from_phone_number_id: phoneNumberId });
      assert.equal(refused.statusCode, 409, refused.body);
      assert.equal(refused.json().code, 'carrier_rejected');
      assert.match(refused.json().detail, /not a valid phone number/);

      carrier.placement = () => 'hang';
      const silent = await dial(org, { agent_id: agentId, to_number: CALLEE, from_phone_number_id: phoneNumberId });
      assert.equal(silent.statusCode, 502, silent.body);
      assert.equal(silent.json().code, 'carrier_unavailable');
    } finally {
      carrier.placement = () => 'accept';
    }
    const list = (await app.inject({ url: '/api/calls?limit=10', headers: asRole(org, 'user') })).json().data;
    assert.equal(list.length, 2);
    for (const summary of list) {
      assert.deepEqual([summary.status, summary.end_reason, summary.billing_status], ['failed', 'error', 'waived']);
    }
    assert.equal(await balanceOf(org.orgId), before);
  });

  test('refusals: unknown, foreign and inbound-only numbers, foreign agents, no credits, the concurrency limit, bad bodies', async () => {
    const { org, phoneNumberId, agentId } = await outboundOrg();
    const other = await outboundOrg();
    const inboundOnly = await carrierNumber(app, carrier, org, { outbound: false, agent: false });
    const body = { agent_id: agentId, to_number: CALLEE, from_phone_number_id: phoneNumberId };
    const cases: Array<[string, Record<string, unknown>, number, string]> = [
      ['unknown number', { ...body, from_phone_number_id: 'phon_0123456789ab' }, 404, 'not_found'],
      ["another organization's number", { ...body, from_phone_number_id: other.phoneNumberId }, 403, 'forbidden'],
      ['an inbound-only number', { ...body, from_phone_number_id: inboundOnly.phoneNumberId }, 409, 'outbound_not_supported'],
      ["another organization's agent", { ...body, agent_id: other.agentId }, 404, 'not_found'],
      ['a number that is not E.164', { ...body, to_number: '4155550123' }, 400, 'validation_error'],
      ['an unknown field', { ...body, priority: 'high' }, 400, 'validation_error'],
      ['metadata over 16 KB', { ...body, metadata: { blob: 'x'.repeat(16_400) } }, 400, 'validation_error'],
      ['51 variables', { ...body, variables: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`v${i}`, 'x'])) }, 400, 'validation_error'],
    ];
    const placedBefore = carrier.placed.length;
    for (const [name, payload, status, code] of cases) {
      const res = await dial(org, payload);
      assert.equal(res.statusCode, status, `${name}: ${res.body}`);
      assert.equal(res.json().code, code, name);
    }

    const broke = await createOrg();
    const brokeNumber = await carrierNumber(app, carrier, broke, { outbound: true });
    const noCredits = await dial(broke, { agent_id: brokeNumber.agentId, to_number: CALLEE, from_phone_number_id: brokeNumber.phoneNumberId });
    assert.equal(noCredits.statusCode, 409, noCredits.body);
    assert.equal(noCredits.json().code, 'insufficient_credits');
    assert.equal(await callCount(broke), 0);

    await setConcurrencyLimit(org.orgId, 0);
    const full = await dial(org, body);
    assert.equal(full.statusCode, 429, full.body);
    assert.equal(full.json().code, 'concurrency_limit');
    assert.ok(Number(full.headers['retry-after']) > 0);
    await setConcurrencyLimit(org.orgId, 10);
    // Nothing was placed and no call was made by any refusal.
    assert.equal(carrier.placed.length, placedBefore);
    assert.equal(await callCount(org), 0);
  });

  test('Idempotency-Key: ten concurrent dials and a late retry with one key make one call, dialled once', async () => {
    const { org, phoneNumberId, agentId } = await outboundOrg();
    const body = { agent_id: agentId, to_number: CALLEE, from_phone_number_id: phoneNumberId };
    const placedBefore = carrier.placed.length;
    const key = { 'idempotency-key': `dial-${org.orgId}` };
    const answers = await Promise.all(Array.from({ length: 10 }, () => dial(org, body, key)));
    const retry = await dial(org, body, key);
    for (const res of [...answers, retry]) assert.equal(res.statusCode, 200, res.body);
    assert.equal(new Set([...answers, retry].map((r) => r.json().data.call_sid)).size, 1);
    assert.equal(retry.headers['idempotent-replayed'], 'true');
    assert.equal(carrier.placed.length - placedBefore, 1);
    assert.equal(await callCount(org), 1);
    const changed = await dial(org, { ...body, to_number: '+14155550124' }, key);
    assert.equal(changed.statusCode, 409, changed.body);
    assert.equal(changed.json().code, 'idempotency_key_reused');
  });
});

describe('dial: SIP numbers', () => {
  let livekit: LiveKitStandIn;
  let app: FastifyInstance;
  before(async () => {
    livekit = await startLiveKitStandIn();
    const { tmpDir } = await testEnv();
    app = await buildTestApp(testConfig(tmpDir, { SIP_BACKEND: 'livekit', LIVEKIT_URL: livekit.url, LIVEKIT_API_KEY: livekit.apiKey, LIVEKIT_API_SECRET: livekit.apiSecret }));
  });
  after(async () => {
    await app?.close();
    await livekit?.close();
  });

  const importSip = async (org: TestOrg, target: FastifyInstance) => {
    const res = await target.inject({
      method: 'POST', url: '/api/phone-numbers', headers: asRole(org, 'admin'),
      payload: {
        phone_number: uniquePhoneNumber(), provider: 'sip', supports_outbound: true, sip_trunk_name: 'PBX', sip_username: 'u',
        sip_password: 'secret-password', inbound_room_name: 'pbx-', sip_server_address: 'sip.example.com',
      },
    });
    assert.equal(res.statusCode, 200, res.body);
    return res.json().data;
  };

  test('LiveKit: CreateSIPParticipant on the number\'s outbound trunk into room {inbound_room_name}{call_sid}; a failing LiveKit gives 502 and a failed call', async () => {
    const org = await createOrg();
    await grantCredits(org.orgId, 10);
    const agent = await createAgent(org);
    const number = await importSip(org, app);
    const res = await app.inject({
      method: 'POST', url: '/api/calls/dial', headers: asRole(org, 'admin'),
      payload: { agent_id: agent.agent_id, to_number: CALLEE, from_phone_number_id: number.phone_number_id },
    });
    assert.equal(res.statusCode, 200, res.body);
    const call = res.json().data;
    assert.equal(call.status, 'queued');
    const request = livekit.participants.at(-1)!;
    assert.deepEqual(
      { trunk: request.sipTrunkId, to: request.sipCallTo, room: request.roomName, identity: request.participantIdentity, from: request.sipNumber },
      { trunk: number.sip.outbound_trunk_id, to: CALLEE, room: `pbx-${call.call_sid}`, identity: call.call_sid, from: number.phone_number },
    );
    assert.deepEqual(request.participantAttributes, { call_sid: call.call_sid, agent_id: agent.agent_id });

    livekit.failing.add('CreateSIPParticipant');
    try {
      const failed = await app.inject({
        method: 'POST', url: '/api/calls/dial', headers: asRole(org, 'admin'),
        payload: { agent_id: agent.agent_id, to_number: CALLEE, from_phone_number_id: number.phone_number_id },
      });
      assert.equal(failed.statusCode, 502, failed.body);
      assert.equal(failed.json().code, 'carrier_unavailable');
    } finally {
      livekit.failing.delete('CreateSIPParticipant');
    }
    const statuses = (await app.inject({ url: '/api/calls', headers: asRole(org, 'user') })).json().data.map((c: any) => c.status).sort();
    assert.deepEqual(statuses, ['failed', 'queued']);
  });

  test('the local SIP backend leaves the call queued for the runtime, with its call.created event', async () => {
    const { app: local } = await testEnv();
    const org = await createOrg();
    await grantCredits(org.orgId, 10);
    const agent = await createAgent(org);
    const number = await createOutboundNumber(org);
    const res = await local.inject({
      method: 'POST', url: '/api/calls/dial', headers: asRole(org, 'agent_manager'),
      payload: { agent_id: agent.agent_id, to_number: CALLEE, from_phone_number_id: number.phone_number_id },
    });
    assert.equal(res.statusCode, 200, res.body);
    const call = res.json().data;
    assert.deepEqual([call.status, call.call_type], ['queued', 'outbound']);
    const events = (await local.inject({ url: '/api/events?type=call.created', headers: asRole(org, 'admin') })).json().data;
    assert.deepEqual(events.map((e: any) => e.data.call_sid), [call.call_sid]);
  });
});
