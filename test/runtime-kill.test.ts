import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { closeVoiceProviders, STANDIN_KEY, startVoiceProviders, type VoiceProviders } from './helpers/voice-providers.ts';
import { startCarrierStandIn, type CarrierStandIn } from './helpers/carrier-standin.ts';
import { buildTestApp, testConfig, testEnv } from './helpers/env.ts';
import { asRole, createOrg, type TestOrg } from './helpers/fixtures.ts';
import { balanceOf, grantCredits } from './helpers/calls.ts';
import { freePort } from './helpers/net.ts';
import { carrierCallSid, carrierNumber, parseTwiml, postCarrierForm } from './helpers/telephony.ts';
import { callMediaStream, streamOf } from './helpers/media-stream-caller.ts';

/**
 * extensions.md §10, scale and faults: a `switchboard runtime` process (RUNTIME_STREAM_URL points the
 * carrier at it) is SIGKILLed in the middle of a call. Nothing reports the call's end from the runtime
 * any more; the carrier's status callback ends it: completed with the carrier's duration, the turns the
 * runtime had reported kept, `call.ended` once; a repeated callback changes nothing.
 */
const ROOT = path.resolve(import.meta.dirname, '..');

let app: FastifyInstance;
let carrier: CarrierStandIn;
let runtime: ChildProcess;
let publicUrl: string;
let runtimeUrl: string;
let providers: VoiceProviders;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-runtime-kill-'));

/** `switchboard runtime` on a port of its own, acting on the app at `apiUrl`; resolves with its address. */
async function startRuntime(apiUrl: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['--import', './src/module-hooks.ts', 'src/cli.ts', 'runtime', '--port', '0', '--host', '127.0.0.1'], {
    cwd: ROOT, env: { ...process.env, DATA_DIR: tmp, LOG_LEVEL: 'silent', RUNTIME_API_URL: apiUrl, DATABASE_URL: '' }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (chunk) => { out += chunk; });
  child.stderr!.on('data', (chunk) => { out += chunk; });
  for (const started = Date.now(); !/Voice runtime at (http:\/\/\S+)/.test(out);) {
    assert.ok(Date.now() - started < 30_000 && child.exitCode === null, `the runtime did not start: ${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return { child, url: /Voice runtime at (http:\/\/\S+)/.exec(out)![1]! };
}

before(async () => {
  carrier = await startCarrierStandIn();
  providers = await startVoiceProviders([{ text: 'Our shop opens at nine on weekdays and ten on Saturdays.' }]);
  const port = await freePort();
  publicUrl = `http://127.0.0.1:${port}`;
  const started = await startRuntime(publicUrl);
  runtime = started.child;
  runtimeUrl = started.url;
  const { tmpDir } = await testEnv();
  app = await buildTestApp(testConfig(tmpDir, {
    CARRIER_A_API_URL: carrier.url, PUBLIC_BASE_URL: publicUrl, ALLOWED_NETWORKS: '127.0.0.1/32',
    RUNTIME_STREAM_URL: `${runtimeUrl.replace('http', 'ws')}/api/runtime/carrier_a/stream`,
  }));
  await app.listen({ port, host: '127.0.0.1' });
});
after(async () => {
  if (runtime?.exitCode === null) runtime.kill('SIGKILL');
  await app?.close();
  await carrier?.close();
  if (providers) await closeVoiceProviders(providers);
  fs.rmSync(tmp, { recursive: true, force: true });
});

const api = async (org: TestOrg, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown) => {
  const headers = asRole(org, 'admin', method === 'POST' && payload === undefined ? { 'content-type': 'application/json' } : {});
  const res = await app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as object }) });
  assert.ok(res.statusCode < 300, `${method} ${url}: ${res.statusCode} ${res.body}`);
  return res.json().data;
};

test('a runtime process SIGKILLed mid-call: the carrier\'s status ends it once, its reported turns kept, nothing charged twice', { timeout: 120_000 }, async () => {
  const org = await createOrg();
  await grantCredits(org.orgId, 100);
  for (const [provider, url] of [['openai', providers.llm.url], ['deepgram', providers.stt.url], ['elevenlabs', providers.tts.url]] as const) {
    const created = await api(org, 'POST', '/api/integrations', { name: provider, provider, ...(provider === 'openai' ? { category: 'llm' } : {}), credentials: { api_key: STANDIN_KEY, base_url: url } });
    assert.equal((await api(org, 'POST', `/api/integrations/${created.integration_id}/validate`)).status, 'active');
  }
  const agent = await api(org, 'POST', '/api/agents', {
    agent_name: 'Shop', system_prompt: 'You answer questions about the shop.', stt_provider: 'deepgram', tts_provider: 'elevenlabs', voice_id: 'voice-standin',
    llm_provider: 'openai', llm_model: 'gpt-test', first_message: 'Hello, this is the shop.', silence_timeout_seconds: 30,
  });
  const number = await carrierNumber(app, carrier, org, { agent: false });
  await api(org, 'PATCH', `/api/phone-numbers/${number.phoneNumberId}`, { agent_id: agent.agent_id });

  const carrierSid = carrierCallSid();
  const params = { CallSid: carrierSid, AccountSid: carrier.account.sid, From: '+14155550199', To: number.phoneNumber, CallStatus: 'ringing', Direction: 'inbound' };
  const answered = await postCarrierForm(app, '/api/telephony/carrier_a/voice', `${publicUrl}/api/telephony/carrier_a/voice`, carrier.account.token, params);
  assert.equal(answered.statusCode, 200, answered.body);
  const stream = streamOf(parseTwiml(answered.body));
  assert.equal(stream.url, `${runtimeUrl.replace('http', 'ws')}/api/runtime/carrier_a/stream`, 'the carrier is sent to the runtime process');
  const callSid = stream.parameters.call_sid!;
  const caller = await callMediaStream({ ...stream, carrierCallSid: carrierSid, accountSid: carrier.account.sid });

  // The greeting heard, then a question and the start of its answer: the runtime has reported turns.
  const marks = () => caller.received.filter((r) => r.message.event === 'mark').length;
  await caller.waitFor('the greeting', () => marks() > 0, 20_000);
  await caller.waitFor('the greeting played', () => caller.now() > caller.playhead() + 150);
  providers.stt.phrases.say('What time do you open on Saturday?');
  await caller.say('What time do you open on Saturday?');
  await caller.waitFor('the answer starts', () => marks() >= 2, 20_000);
  for (const deadline = Date.now() + 10_000; ;) {
    const call = await api(org, 'GET', `/api/calls/${callSid}`);
    if (call.status === 'in_progress' && (call.transcript ?? []).some((t: { role: string }) => t.role === 'user')) break;
    assert.ok(Date.now() < deadline, `the runtime never reported the caller's turn: ${JSON.stringify(call)}`);
    await new Promise((r) => setTimeout(r, 50));
  }

  const exited = new Promise((resolve) => runtime.once('exit', resolve));
  runtime.kill('SIGKILL');
  await exited;
  await caller.closed;
  const reported = await api(org, 'GET', `/api/calls/${callSid}`);
  assert.equal(reported.status, 'in_progress', 'nothing ended the call but the runtime, which is gone');

  // The carrier hangs the call up after 23 s and says so, twice (a retried callback).
  const statusUrl = `${publicUrl}/api/telephony/carrier_a/status`;
  for (let attempt = 0; attempt < 2; attempt++) {
    const res = await postCarrierForm(app, '/api/telephony/carrier_a/status', statusUrl, carrier.account.token, { ...params, CallStatus: 'completed', CallDuration: '23' });
    assert.equal(res.statusCode, 200, res.body);
  }
  const ended = await api(org, 'GET', `/api/calls/${callSid}`);
  assert.equal(ended.status, 'completed');
  assert.equal(ended.duration_seconds, 23, "the carrier's duration");
  assert.deepEqual(ended.transcript.slice(0, reported.transcript.length), reported.transcript, 'the turns reported before the kill are kept');
  assert.ok(ended.transcript.some((t: { role: string; text: string }) => t.role === 'agent' && /Hello, this is the shop/.test(t.text)));
  // Costs are priced by the runtime (§10), which died before its final report: nothing to charge, and
  // nothing charged twice by the repeated callback. A late report from a runtime would rebill it.
  assert.deepEqual([ended.total_cost, ended.billing_status], [null, 'waived']);

  const ledger = (await api(org, 'GET', '/api/billing/transactions?page_size=100')) as Array<Record<string, unknown>>;
  assert.deepEqual(ledger.filter((row) => JSON.stringify(row).includes(callSid)), [], 'no charge');
  assert.ok(Math.abs(await balanceOf(org.orgId) - 100) < 0.001, 'the balance is untouched');
  const events = await api(org, 'GET', '/api/events?type=call.ended&limit=100');
  assert.equal(events.filter((e: unknown) => JSON.stringify(e).includes(callSid)).length, 1, 'call.ended emitted once');
});
