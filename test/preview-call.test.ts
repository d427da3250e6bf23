import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { closeVoiceProviders, STANDIN_KEY, startVoiceProviders, type VoiceProviders } from './helpers/voice-providers.ts';
import { decodeWav } from '@switchboard/runtime';
import { buildTestApp, testConfig, testEnv } from './helpers/env.ts';
import { asRole, createAgent, createOrg, type TestOrg } from './helpers/fixtures.ts';
import { runAuthMatrix } from './helpers/auth-matrix.ts';
import { grantCredits } from './helpers/calls.ts';
import { setConcurrencyLimit } from './helpers/limits.ts';
import { freePort } from './helpers/net.ts';
import { connectPreview } from './helpers/preview-client.ts';
import { speechPcm } from '../runtime/test/helpers/speech.ts';
import { PreviewCallSweeper } from '../src/modules/calls/preview/sweep.ts';

/**
 * extensions.md §11 end to end: a preview session created through the API, the browser's WebSocket
 * (played by `ws` in real time with eSpeak NG speech at 16 kHz) served by the built-in runtime of the
 * real app listening on 127.0.0.1, the providers stand-ins speaking their wire protocols.
 */
runAuthMatrix({
  method: 'POST', route: '/api/agents/{agent_id}/preview-sessions', permission: 'agents:preview', foreignStatus: 404,
  path: async (org) => `/api/agents/${(await createAgent(org)).agent_id}/preview-sessions`,
});


describe('talking to an agent in the browser (preview sessions)', () => {
  let app: FastifyInstance;
  let publicUrl: string;
  before(async () => {
    const port = await freePort();
    publicUrl = `http://127.0.0.1:${port}`;
    const { tmpDir } = await testEnv();
    app = await buildTestApp(testConfig(tmpDir, { PUBLIC_BASE_URL: publicUrl, ALLOWED_NETWORKS: '127.0.0.1/32' }));
    await app.listen({ port, host: '127.0.0.1' });
  });
  after(async () => { await app?.close(); });

  const api = async (org: TestOrg, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown) => {
    const headers = asRole(org, 'admin', method === 'POST' && payload === undefined ? { 'content-type': 'application/json' } : {});
    const res = await app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as object }) });
    assert.ok(res.statusCode < 300, `${method} ${url}: ${res.statusCode} ${res.body}`);
    return res.json().data;
  };
  const preview = (org: TestOrg, agentId: string, role: 'admin' | 'agent_manager' | 'user' = 'agent_manager') =>
    app.inject({ method: 'POST', url: `/api/agents/${agentId}/preview-sessions`, headers: asRole(org, role) });

  async function voiceOrg(providers: VoiceProviders, agent: Record<string, unknown>) {
    const org = await createOrg();
    await grantCredits(org.orgId, 100);
    for (const [provider, url] of [['openai', providers.llm.url], ['deepgram', providers.stt.url], ['elevenlabs', providers.tts.url]] as const) {
      await api(org, 'POST', '/api/integrations', { name: provider, provider, ...(provider === 'openai' ? { category: 'llm' } : {}), credentials: { api_key: STANDIN_KEY, base_url: url } });
    }
    const created = await api(org, 'POST', '/api/agents', {
      agent_name: 'Acme desk', system_prompt: 'You are the Acme help desk. Be brief.', stt_provider: 'deepgram', tts_provider: 'elevenlabs',
      voice_id: 'voice-standin', llm_provider: 'openai', llm_model: 'gpt-test', silence_timeout_seconds: 20, ...agent,
    });
    return { org, agentId: created.agent_id as string };
  }

  test('a session: greeting audio, live transcript, a turn with latency, barge-in, {type: "end"}; the call completed with its transcript and no telephony cost', { timeout: 90_000 }, async () => {
    const longAnswer = 'Returns are free for thirty days. Keep the receipt with the parcel. Print the label from your account page. Drop the parcel at any post office. The refund follows within five working days.';
    const providers = await startVoiceProviders([{ text: 'We open at nine.' }, { text: longAnswer }]);
    try {
      const { org, agentId } = await voiceOrg(providers, { first_message: 'Hello, this is Acme.', recording_enabled: true });
      const res = await preview(org, agentId);
      assert.equal(res.statusCode, 200, res.body);
      const session = res.json().data;
      assert.match(session.call_sid, /^call_/);
      const wsBase = publicUrl.replace('http', 'ws');
      assert.equal(session.websocket_url, `${wsBase}/api/runtime/preview?token=${encodeURIComponent(session.token)}`);
      // The token: a call token for this call (its sub), expiring max_call_duration_seconds + 300 s after issue (extensions.md §10).
      const claims = JSON.parse(Buffer.from(session.token.split('.')[1], 'base64url').toString());
      assert.deepEqual([claims.sub, claims.org, claims.agent_id, claims.scope], [session.call_sid, org.orgId, agentId, 'runtime']);
      const agent = await api(org, 'GET', `/api/agents/${agentId}`);
      assert.equal(claims.exp - claims.iat, agent.max_call_duration_seconds + 300);
      assert.equal(new Date(session.expires_at).getTime(), claims.exp * 1000);
      const queued = await api(org, 'GET', `/api/calls/${session.call_sid}`);
      assert.deepEqual([queued.call_type, queued.status, queued.agent_version], ['preview', 'queued', agent.version]);

      const browser = await connectPreview(session.websocket_url);
      // The greeting: agent audio in 20 ms frames of 16 kHz PCM, speaking on, its transcript.
      await browser.waitFor('the greeting', () => browser.events.some((e) => e.message.type === 'agent_speaking' && e.message.speaking === false));
      assert.ok(browser.audio.length > 10 && browser.audio.every((a) => a.frame.length === 640), 'agent audio in 640-byte frames');
      assert.ok(browser.speechFramesSince(0) > 10, 'the greeting is speech, not silence');
      assert.deepEqual(browser.events.find((e) => e.message.type === 'transcript' && e.message.role === 'agent')?.message, { type: 'transcript', role: 'agent', text: 'Hello, this is Acme.', final: true });
      assert.equal((await api(org, 'GET', `/api/calls/${session.call_sid}`)).status, 'in_progress');

      // A question: the user's transcript (final), the answer spoken, and a turn with its latency.
      providers.stt.phrases.say('When do you open?', 'Tell me about returns', 'Thanks, goodbye.');
      const asked = browser.now();
      await browser.say('When do you open?');
      await browser.waitFor('the turn', () => browser.events.some((e) => e.message.type === 'turn'));
      await browser.waitFor('the answer', () => browser.events.some((e) => e.message.type === 'transcript' && e.message.text === 'We open at nine.'));
      const turn = browser.events.find((e) => e.message.type === 'turn')!;
      assert.deepEqual(Object.keys(turn.message.latency).sort(), ['llm_first_token_ms', 'stt_ms', 'total_ms', 'tts_first_byte_ms']);
      // total_ms runs from the end of the user's speech to the first agent frame: it cannot exceed, on this side's
      // clock, the time from the question's first frame to the answer's first frame.
      const spokenUntil = asked + (await speechPcm('When do you open?', 16000)).length / 32; // 32 bytes per ms at 16 kHz
      const firstAnswerFrame = browser.audio.find((a) => a.at > spokenUntil)!.at;
      assert.ok(turn.message.latency.total_ms > 0 && turn.message.latency.total_ms <= firstAnswerFrame - asked + 100, JSON.stringify(turn.message.latency));
      assert.deepEqual(browser.events.find((e) => e.message.type === 'transcript' && e.message.role === 'user' && e.message.final)?.message,
        { type: 'transcript', role: 'user', text: 'When do you open?', final: true });
      await browser.waitFor('the answer played', () => browser.events.filter((e) => e.message.type === 'agent_speaking' && !e.message.speaking).length >= 2);
      assert.ok(browser.speechFramesSince(asked) > 10, 'the answer is spoken');

      // Barge-in: the user talks over a long answer; the agent stops speaking before it is done.
      await browser.say('Tell me about returns.');
      await browser.waitFor('the long answer', () => browser.events.some((e) => e.message.type === 'agent_speaking' && e.message.speaking && e.at > asked + 3000));
      await new Promise((r) => setTimeout(r, 1500));
      const bargeIn = browser.now();
      await browser.say('Thanks, goodbye.');
      await browser.waitFor('the agent to stop', () => browser.events.some((e) => e.message.type === 'agent_speaking' && !e.message.speaking && e.at > bargeIn));

      // {type: "end"}: the call ends user_hangup, the browser is told, the socket closes.
      browser.send({ type: 'end' });
      await browser.waitFor('ended', () => browser.events.some((e) => e.message.type === 'ended'));
      assert.deepEqual(browser.events.find((e) => e.message.type === 'ended')!.message, { type: 'ended', end_reason: 'user_hangup' });
      await browser.closed;

      let call = await api(org, 'GET', `/api/calls/${session.call_sid}`);
      for (const deadline = Date.now() + 10_000; call.status !== 'completed' && Date.now() < deadline; call = await api(org, 'GET', `/api/calls/${session.call_sid}`)) await new Promise((r) => setTimeout(r, 100));
      assert.deepEqual([call.call_type, call.status, call.end_reason, call.agent_version], ['preview', 'completed', 'user_hangup', agent.version]);
      const said = call.transcript.map((t: any) => [t.role, t.text]);
      assert.deepEqual(said.slice(0, 3), [['agent', 'Hello, this is Acme.'], ['user', 'When do you open?'], ['agent', 'We open at nine.']]);
      const cut = call.transcript.find((t: any) => t.interrupted === true);
      assert.ok(cut && cut.text.length < longAnswer.length, 'the long answer was cut by the barge-in');
      assert.ok(call.transcript.find((t: any) => t.text === 'We open at nine.').latency.total_ms > 0);
      assert.ok(call.latency_p50_ms > 0);
      assert.equal(call.cost_breakdown.telephony, 0, 'a preview has no carrier minutes');
      assert.ok(call.cost_breakdown.llm > 0 && call.cost_breakdown.tts > 0 && call.cost_breakdown.stt > 0);
      // With recording_enabled, the preview is recorded like a phone call: stereo 8 kHz, as long as the call.
      for (const deadline = Date.now() + 10_000; !call.recording_url && Date.now() < deadline; call = await api(org, 'GET', `/api/calls/${session.call_sid}`)) await new Promise((r) => setTimeout(r, 100));
      const download = await app.inject({ url: `/api/calls/${session.call_sid}/recording/download`, headers: asRole(org, 'user') });
      assert.equal(download.statusCode, 200);
      const wav = decodeWav(download.rawPayload);
      assert.deepEqual([wav.channels, wav.sampleRate], [2, 8000]);
      assert.ok(Math.abs(wav.samples.length / 2 / 8000 - call.duration_seconds) < 0.5, `recording ${wav.samples.length / 16000} s, call ${call.duration_seconds} s`);
      const left = wav.samples.filter((_, i) => i % 2 === 0);
      const right = wav.samples.filter((_, i) => i % 2 === 1);
      const loud = (channel: Int16Array) => channel.reduce((n, v) => n + (Math.abs(v) > 1000 ? 1 : 0), 0);
      assert.ok(loud(left) > 800 && loud(right) > 800, 'the user (left) and the agent (right) are both heard');
    } finally {
      await closeVoiceProviders(providers);
    }
  });

  test('a bad token is refused: a policy close (1008), no audio, the call untouched', { timeout: 30_000 }, async () => {
    const org = await createOrg();
    await grantCredits(org.orgId, 10);
    const agent = await createAgent(org);
    const session = (await preview(org, agent.agent_id)).json().data;
    const wsBase = publicUrl.replace('http', 'ws');
    const [header, payload] = session.token.split('.');
    for (const token of ['', 'not-a-token', `${header}.${payload}.${'A'.repeat(43)}`]) {
      const browser = await connectPreview(`${wsBase}/api/runtime/preview?token=${encodeURIComponent(token)}`);
      const closed = await browser.closed;
      assert.equal(closed.code, 1008, `token "${token.slice(0, 20)}": ${JSON.stringify(closed)}`);
      assert.deepEqual([browser.audio.length, browser.events.length], [0, 0]);
    }
    assert.equal((await api(org, 'GET', `/api/calls/${session.call_sid}`)).status, 'queued', 'a forged token reports nothing');
  });

  test('permission and isolation: a user (viewer) gets 403 permission_denied; another organization\'s agent 404', async () => {
    const org = await createOrg();
    const other = await createOrg();
    await grantCredits(org.orgId, 10);
    const agent = await createAgent(org);
    const theirs = await createAgent(other);
    const denied = await preview(org, agent.agent_id, 'user');
    assert.deepEqual([denied.statusCode, denied.json().code], [403, 'permission_denied']);
    const foreign = await preview(org, theirs.agent_id, 'admin');
    assert.deepEqual([foreign.statusCode, foreign.json().code], [404, 'not_found']);
    assert.equal((await preview(org, agent.agent_id, 'admin')).statusCode, 200);
  });

  test('no credits → 409 insufficient_credits; over the concurrency limit → 429 concurrency_limit; neither creates a call', async () => {
    const org = await createOrg();
    const agent = await createAgent(org);
    const broke = await preview(org, agent.agent_id);
    assert.deepEqual([broke.statusCode, broke.json().code], [409, 'insufficient_credits']);
    await grantCredits(org.orgId, 10);
    await setConcurrencyLimit(org.orgId, 1);
    assert.equal((await preview(org, agent.agent_id)).statusCode, 200);
    const full = await preview(org, agent.agent_id);
    assert.deepEqual([full.statusCode, full.json().code], [429, 'concurrency_limit']);
    const calls = await api(org, 'GET', '/api/calls?call_type=preview');
    assert.equal(calls.length, 1, 'only the admitted session made a call');
  });

  test('a lost preview call is ended error: never connected after 60 s (not_connected), or its runtime silent for 40 s (runtime_lost)', async () => {
    const { database, services } = await testEnv();
    const sweeper = new PreviewCallSweeper({ db: database.db, calls: services.calls });
    const org = await createOrg();
    await grantCredits(org.orgId, 10);
    const agent = await createAgent(org);
    const unconnected = (await preview(org, agent.agent_id)).json().data;
    const talking = (await preview(org, agent.agent_id)).json().data;
    // The runtime loaded the second call and reported it in progress with its token, then died.
    const report = await app.inject({
      method: 'PATCH', url: `/api/calls/${talking.call_sid}`, payload: { status: 'in_progress' },
      headers: { authorization: `Bearer ${talking.token}`, 'x-organization-id': org.orgId },
    });
    assert.equal(report.statusCode, 200, report.body);
    const at = (seconds: number) => new Date(Date.now() + seconds * 1000);
    assert.deepEqual(await sweeper.sweep(at(0), org.orgId), [], 'nothing is lost yet');
    assert.deepEqual(await sweeper.sweep(at(45), org.orgId), [talking.call_sid], 'silent for more than 40 s');
    assert.deepEqual(await sweeper.sweep(at(65), org.orgId), [unconnected.call_sid], 'unconnected for more than 60 s');
    const [first, second] = [await api(org, 'GET', `/api/calls/${unconnected.call_sid}`), await api(org, 'GET', `/api/calls/${talking.call_sid}`)];
    assert.deepEqual([first.status, first.end_reason, first.error.provider, first.error.code], ['failed', 'error', 'runtime', 'not_connected']);
    assert.deepEqual([second.status, second.end_reason, second.error.provider, second.error.code], ['failed', 'error', 'runtime', 'runtime_lost']);
    // Their places under the concurrency limit are free again.
    await setConcurrencyLimit(org.orgId, 1);
    assert.equal((await preview(org, agent.agent_id)).statusCode, 200);
  });
});
