import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { closeVoiceProviders, STANDIN_KEY, startVoiceProviders, type VoiceProviders } from './helpers/voice-providers.ts';
import { decodeWav } from '@switchboard/runtime';
import { startCarrierStandIn, type CarrierStandIn } from './helpers/carrier-standin.ts';
import { buildTestApp, testConfig, testEnv } from './helpers/env.ts';
import { asRole, createOrg, type TestOrg } from './helpers/fixtures.ts';
import { balanceOf, grantCredits } from './helpers/calls.ts';
import { createTextDocument, waitForProcessing } from './helpers/documents.ts';
import { freePort } from './helpers/net.ts';
import { carrierCallSid, carrierNumber, parseTwiml, postCarrierForm } from './helpers/telephony.ts';
import { startReceiver, type Receiver } from './helpers/webhook-receiver.ts';
import { callMediaStream, streamOf, type MediaStreamCaller } from './helpers/media-stream-caller.ts';

/**
 * extensions.md §10 end to end: the real app listening on 127.0.0.1 runs its built-in runtime
 * (RUNTIME=in-process, the default); a carrier stand-in plays Media Streams in real time with eSpeak
 * NG speech; the LLM (OpenAI-compatible), Deepgram and ElevenLabs are stand-ins speaking their wire
 * protocols on 127.0.0.1; the agent's webhook tool is a receiver on 127.0.0.2.
 */

describe('a voice call answered by the built-in runtime', () => {
  let app: FastifyInstance;
  let carrier: CarrierStandIn;
  let tool: Receiver;
  let publicUrl: string;
  before(async () => {
    carrier = await startCarrierStandIn();
    tool = await startReceiver({ answer: () => ({ status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ order: '42', status: 'shipped', arrives: 'tomorrow' }) }) });
    const port = await freePort();
    publicUrl = `http://127.0.0.1:${port}`;
    const { tmpDir } = await testEnv();
    app = await buildTestApp(testConfig(tmpDir, {
      CARRIER_A_API_URL: carrier.url, PUBLIC_BASE_URL: publicUrl,
      // The provider stand-ins listen on 127.0.0.1: their base_url must pass the outbound address rule.
      ALLOWED_NETWORKS: '127.0.0.1/32,127.0.0.2/32', METRICS_TOKEN: 'metrics-token-for-the-test',
    }));
    await app.listen({ port, host: '127.0.0.1' });
  });
  after(async () => {
    await app?.close();
    await carrier?.close();
    await tool?.close();
  });

  const api = async (org: TestOrg, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown) => {
    const headers = asRole(org, 'admin', method === 'POST' && payload === undefined ? { 'content-type': 'application/json' } : {});
    const res = await app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as object }) });
    assert.ok(res.statusCode < 300, `${method} ${url}: ${res.statusCode} ${res.body}`);
    return res.json().data;
  };

  /** An organization with credits, the three provider integrations (validated), and an agent on an imported carrier number. */
  async function voiceOrg(providers: VoiceProviders, agent: Record<string, unknown>, options: { outbound?: boolean } = {}) {
    const org = await createOrg();
    await grantCredits(org.orgId, 100);
    for (const [provider, url] of [['openai', providers.llm.url], ['deepgram', providers.stt.url], ['elevenlabs', providers.tts.url]] as const) {
      const created = await api(org, 'POST', '/api/integrations', { name: provider, provider, ...(provider === 'openai' ? { category: 'llm' } : {}), credentials: { api_key: STANDIN_KEY, base_url: url } });
      const validated = await api(org, 'POST', `/api/integrations/${created.integration_id}/validate`);
      assert.equal(validated.status, 'active', `${provider} validated against its stand-in`);
    }
    const created = await api(org, 'POST', '/api/agents', {
      agent_name: 'Acme desk', system_prompt: 'You are the Acme help desk. Be brief.', stt_provider: 'deepgram', tts_provider: 'elevenlabs',
      voice_id: 'voice-standin', llm_provider: 'openai', llm_model: 'gpt-test', silence_timeout_seconds: 20, ...agent,
    });
    const number = await carrierNumber(app, carrier, org, { agent: false, outbound: options.outbound });
    await api(org, 'PATCH', `/api/phone-numbers/${number.phoneNumberId}`, { agent_id: created.agent_id });
    return { ...number, org, agentId: created.agent_id as string };
  }

  /** A signed inbound voice webhook, and the carrier's Media Streams caller connected to the TwiML's stream. */
  async function inboundCall(phoneNumber: string) {
    const carrierSid = carrierCallSid();
    const params = { CallSid: carrierSid, AccountSid: carrier.account.sid, From: '+14155550199', To: phoneNumber, CallStatus: 'ringing', Direction: 'inbound' };
    const res = await postCarrierForm(app, '/api/telephony/carrier_a/voice', `${publicUrl}/api/telephony/carrier_a/voice`, carrier.account.token, params);
    assert.equal(res.statusCode, 200, res.body);
    const stream = streamOf(parseTwiml(res.body));
    assert.equal(stream.url, `${publicUrl.replace('http', 'ws')}/api/runtime/carrier_a/stream`, 'the built-in runtime at PUBLIC_BASE_URL');
    const caller = await callMediaStream({ ...stream, carrierCallSid: carrierSid, accountSid: carrier.account.sid });
    return { caller, carrierSid, callSid: stream.parameters.call_sid!, token: stream.parameters.token! };
  }

  const getCall = async (org: TestOrg, sid: string) => api(org, 'GET', `/api/calls/${sid}`);
  const marks = (caller: MediaStreamCaller) => caller.received.filter((r) => r.message.event === 'mark').length;
  /** The agent's utterance has been heard: a mark came after it and its audio has played. */
  async function heardAgent(caller: MediaStreamCaller, marksBefore: number, what: string) {
    await caller.waitFor(what, () => marks(caller) > marksBefore);
    await caller.waitFor(`${what} played`, () => caller.now() > caller.playhead() + 150);
  }

  test('inbound: greeting, a question answered with a webhook tool and the knowledge base, barge-in, end_call; the call completed with transcript, latency, costs and recording, billed once, call.ended emitted', { timeout: 120_000 }, async () => {
    const providers = await startVoiceProviders([
      { toolCall: { name: 'check_order', arguments: { order_id: '42' } } },
      { toolCall: { name: 'search_knowledge_base', arguments: { query: 'delivery area' } } },
      { text: 'Order 42 ships tomorrow. We deliver within Springfield.' },
      { text: 'Returns are free for thirty days. Keep the receipt with the parcel. Print the label from your account page. Drop the parcel at any post office. The refund follows within five working days. Gift cards are refunded as store credit.' },
      { toolCall: { name: 'end_call', arguments: { reason: 'the caller said goodbye' } }, text: 'Goodbye!' },
    ]);
    try {
      const setup = await voiceOrg(providers, { first_message: 'Hello, this is Acme.', recording_enabled: true });
      const { org } = setup;
      const createdTool = await api(org, 'POST', '/api/tools', {
        tool_name: 'check_order', tool_description: 'Look up an order by its number', webhook_url: `${tool.url}/orders`, http_method: 'POST',
        parameters: [{ name: 'order_id', type: 'string', required: true }],
      });
      const document = await createTextDocument(org, 'Delivery', 'Acme delivers within the city of Springfield on weekdays, between nine and five.');
      assert.equal((await waitForProcessing(org, document.documentation_id, 20_000, app)).processing_status, 'completed');
      await api(org, 'PATCH', `/api/agents/${setup.agentId}`, { tool_ids: [createdTool.tool_id], documentation_ids: [document.documentation_id] });
      const hooked = await api(org, 'POST', '/api/webhooks', { url: `${tool.url}/events`, event_types: ['call.ended'] });
      tool.secrets.push(hooked.secret);

      const { caller, carrierSid, callSid } = await inboundCall(setup.phoneNumber);

      // The greeting: speech energy on the outbound track, then its mark.
      await heardAgent(caller, 0, 'the greeting');
      assert.ok(caller.speechFramesSince(0) > 10, 'the greeting is speech, not silence');
      assert.equal((await getCall(org, callSid)).status, 'in_progress');

      // A question: the webhook tool, then the knowledge base, then the answer spoken.
      providers.stt.phrases.say('Where is my order and do you deliver to Springfield?');
      const asked = caller.now();
      let before = marks(caller);
      await caller.say('Where is my order?');
      await heardAgent(caller, before, 'the answer');
      assert.ok(caller.speechFramesSince(asked) > 10, 'the answer is spoken');
      const toolCall = tool.received.find((r) => r.path === '/orders');
      assert.ok(toolCall, 'the tool receiver was called');
      assert.deepEqual(JSON.parse(toolCall.body).arguments, { order_id: '42' });

      // Barge-in: the caller speaks over a long answer; the carrier is told to clear its buffer.
      providers.stt.phrases.say('Tell me about returns', 'Thanks, that is all, goodbye.');
      before = marks(caller);
      const question = caller.now();
      await caller.say('Tell me about returns.');
      // Its first sentence sent (a mark after it) and played (the runtime sends up to a second ahead), the second under way.
      await caller.waitFor('the long answer\'s first sentence', () => marks(caller) > before);
      await new Promise((r) => setTimeout(r, 1300));
      assert.ok(caller.speechFramesSince(question) > 50, 'the long answer is being spoken');
      const bargeIn = caller.now();
      await caller.say('Thanks, that is all, goodbye.');
      const clear = caller.received.find((r) => r.message.event === 'clear' && r.at > bargeIn);
      assert.ok(clear, 'clear sent on barge-in');
      assert.ok(clear.at - bargeIn < 1000, `clear ${Math.round(clear.at - bargeIn)} ms after the caller started speaking`);

      // end_call: the runtime reports, closes the stream; the server hangs up the carrier leg.
      const closedAt = await caller.closed.then(() => caller.now());
      await caller.waitFor('the hang-up request', () => carrier.callUpdates.some((u) => u.callSid === carrierSid), 10_000);
      assert.deepEqual(carrier.callUpdates.filter((u) => u.callSid === carrierSid).map((u) => u.status), ['completed']);
      // The carrier's own status callback after the runtime's report bills nothing twice.
      const status = { CallSid: carrierSid, AccountSid: carrier.account.sid, From: '+14155550199', To: setup.phoneNumber, Direction: 'inbound', CallStatus: 'completed', CallDuration: String(Math.round(closedAt / 1000)) };
      assert.equal((await postCarrierForm(app, '/api/telephony/carrier_a/status', `${publicUrl}/api/telephony/carrier_a/status`, carrier.account.token, status)).statusCode, 200);

      let call = await getCall(org, callSid);
      for (const deadline = Date.now() + 10_000; !call.recording_url && Date.now() < deadline; call = await getCall(org, callSid)) await new Promise((r) => setTimeout(r, 100));
      assert.deepEqual([call.status, call.end_reason, call.error], ['completed', 'tool_end_call', null]);
      const roles = call.transcript.map((t: any) => t.role);
      assert.deepEqual(call.transcript.filter((t: any) => t.role === 'tool').map((t: any) => t.tool.name), ['check_order', 'search_knowledge_base', 'end_call']);
      assert.ok(roles.includes('user') && roles.includes('agent'), roles.join(','));
      const knowledge = call.transcript.find((t: any) => t.tool?.name === 'search_knowledge_base').tool;
      assert.ok(JSON.stringify(knowledge.result).includes('Springfield'), 'the knowledge search found the document');
      const answered = call.transcript.filter((t: any) => t.role === 'agent' && t.latency);
      assert.ok(answered.length >= 2, 'latency on the agent turns that answered the caller');
      for (const turn of answered) assert.ok(turn.latency.total_ms > 0 && turn.latency.total_ms < 5000, JSON.stringify(turn.latency));
      const interrupted = call.transcript.filter((t: any) => t.interrupted === true);
      assert.equal(interrupted.length, 1, 'the long answer was cut');
      assert.ok(interrupted[0].text.length < 'Returns are free for thirty days. Keep the receipt with the parcel. Print the label from your account page. Drop the parcel at any post office. The refund follows within five working days. Gift cards are refunded as store credit.'.length);
      assert.ok(call.latency_p50_ms > 0 && call.latency_p95_ms >= call.latency_p50_ms);
      assert.deepEqual(Object.keys(call.cost_breakdown).sort(), ['llm', 'platform', 'stt', 'telephony', 'tts']);
      assert.ok(call.cost_breakdown.llm > 0 && call.cost_breakdown.tts > 0 && call.cost_breakdown.stt > 0 && call.cost_breakdown.telephony > 0);
      assert.ok(Math.abs(call.total_cost - Object.values<number>(call.cost_breakdown).reduce((a, b) => a + b, 0)) < 0.001);

      // The recording: stereo WAV, as long as the call the carrier heard.
      const download = await app.inject({ url: `/api/calls/${callSid}/recording/download`, headers: asRole(org, 'user') });
      assert.equal(download.statusCode, 200);
      const wav = decodeWav(download.rawPayload);
      assert.deepEqual([wav.channels, wav.sampleRate], [2, 8000]);
      const seconds = wav.samples.length / 2 / 8000;
      // As long as the call the runtime timed (its clock starts once the call is loaded), within what the carrier streamed.
      assert.ok(Math.abs(seconds - call.duration_seconds) < 0.5, `recording ${seconds.toFixed(2)} s, call ${call.duration_seconds} s`);
      assert.ok(seconds <= closedAt / 1000 && seconds > closedAt / 1000 - 5, `recording ${seconds.toFixed(2)} s, stream ${(closedAt / 1000).toFixed(2)} s`);

      // Billed once: one usage row for the call, the balance down by the call's cost.
      const ledger = (await api(org, 'GET', '/api/billing/transactions')) as Array<Record<string, any>>;
      const usage = ledger.filter((row) => JSON.stringify(row).includes(callSid));
      assert.equal(usage.length, 1, JSON.stringify(ledger));
      assert.ok(Math.abs(await balanceOf(org.orgId) - (100 - call.total_cost)) < 0.001);
      const events = await api(org, 'GET', '/api/events?type=call.ended&limit=100');
      assert.equal(events.filter((e: any) => JSON.stringify(e).includes(callSid)).length, 1, 'call.ended emitted once');
      await tool.waitFor((r) => r.some((x) => x.event?.type === 'call.ended'), 15_000);

      // The server's /metrics carries the in-process runtime's: no call active now, the turns' latency observed.
      const metrics = (await app.inject({ url: '/metrics', headers: { authorization: 'Bearer metrics-token-for-the-test' } })).body;
      assert.match(metrics, /^switchboard_runtime_active_calls 0$/m);
      const observed = Number(/^switchboard_runtime_turn_latency_seconds_count (\d+)$/m.exec(metrics)?.[1]);
      assert.ok(observed >= answered.length, `turn latency observations: ${observed}`);
      assert.match(metrics, /^# TYPE switchboard_runtime_provider_errors_total counter$/m);
    } finally {
      await closeVoiceProviders(providers);
    }
  });

  test('outbound: a dialled call answered by the callee is greeted and talked through', { timeout: 60_000 }, async () => {
    const providers = await startVoiceProviders([{ text: 'We open at nine.' }]);
    try {
      const setup = await voiceOrg(providers, { first_message: 'Hi, Acme calling.' }, { outbound: true });
      const dialled = await api(setup.org, 'POST', '/api/calls/dial', { agent_id: setup.agentId, to_number: '+14155550123', from_phone_number_id: setup.phoneNumberId });
      const placed = carrier.placed.at(-1)!;
      let hungUp!: () => void;
      const played = carrier.play(placed.sid, { result: 'answered', until: new Promise<void>((r) => { hungUp = r; }) });
      await new Promise<void>((resolve, reject) => {
        const deadline = Date.now() + 10_000;
        const check = () => placed.answers.some((a) => a.startsWith('<')) ? resolve() : Date.now() > deadline ? reject(new Error('no voice answer')) : setTimeout(check, 20);
        check();
      });
      const stream = streamOf(parseTwiml(placed.answers.find((a) => a.startsWith('<'))!));
      assert.equal(stream.parameters.call_sid, dialled.call_sid);
      const caller = await callMediaStream({ ...stream, carrierCallSid: placed.sid, accountSid: carrier.account.sid });
      await heardAgent(caller, 0, 'the greeting');
      providers.stt.phrases.say('When do you open?');
      const before = marks(caller);
      const asked = caller.now();
      await caller.say('When do you open?');
      await heardAgent(caller, before, 'the answer');
      assert.ok(caller.speechFramesSince(asked) > 10, 'the answer is spoken');
      caller.stop(); // the callee hangs up
      let call = await getCall(setup.org, dialled.call_sid);
      for (const deadline = Date.now() + 10_000; call.end_reason !== 'user_hangup' && Date.now() < deadline; call = await getCall(setup.org, dialled.call_sid)) await new Promise((r) => setTimeout(r, 100));
      // The carrier's final status follows the runtime's report (the other order is the server's to reconcile, tested with it).
      hungUp();
      await played;
      call = await getCall(setup.org, dialled.call_sid);
      assert.deepEqual([call.status, call.end_reason], ['completed', 'user_hangup']);
      assert.deepEqual(call.transcript.map((t: any) => [t.role, t.text]), [['agent', 'Hi, Acme calling.'], ['user', 'When do you open?'], ['agent', 'We open at nine.']]);
    } finally {
      await closeVoiceProviders(providers);
    }
  });

  test('a failing LLM ends the call failed with error.provider openai, not in silence', { timeout: 60_000 }, async () => {
    const providers = await startVoiceProviders([{ text: 'never said' }]);
    try {
      const setup = await voiceOrg(providers, { first_message: null });
      providers.llm.failNext({ status: 500 });
      const { caller, callSid } = await inboundCall(setup.phoneNumber);
      providers.stt.phrases.say('Hello?');
      await caller.say('Hello?');
      await caller.closed;
      let call = await getCall(setup.org, callSid);
      for (const deadline = Date.now() + 10_000; call.status !== 'failed' && Date.now() < deadline; call = await getCall(setup.org, callSid)) await new Promise((r) => setTimeout(r, 100));
      assert.deepEqual([call.status, call.end_reason, call.error?.provider], ['failed', 'error', 'openai']);
    } finally {
      await closeVoiceProviders(providers);
    }
  });
});
