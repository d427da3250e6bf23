import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { SignJWT } from 'jose';
import { startCarrierStandIn, type CarrierStandIn } from './helpers/carrier-standin.ts';
import { runAuthMatrix } from './helpers/auth-matrix.ts';
import { buildTestApp, TEST_JWT_SECRET, testConfig, testEnv } from './helpers/env.ts';
import { asRole, createAgent, createOrg, userToken, type TestOrg } from './helpers/fixtures.ts';
import { balanceOf, createCall, grantCredits } from './helpers/calls.ts';
import { carrierCallSid, carrierNumber, children, parseTwiml, postCarrierForm } from './helpers/telephony.ts';
import { startReceiver } from './helpers/webhook-receiver.ts';

/** extensions.md §10: the server side of the voice runtime (call token, runtime routes, provider integrations). */
const PUBLIC = 'https://sb.example.test';
const VOICE_URL = `${PUBLIC}/api/telephony/carrier_a/voice`;
const BUILT_IN_STREAM = 'wss://sb.example.test/api/runtime/carrier_a/stream';

/** A provider stand-in on 127.0.0.2 that accepts one key, the way each vendor sends it. */
async function startProviderStandIn(goodKey: string) {
  const seen: Array<{ path: string; headers: http.IncomingHttpHeaders }> = [];
  const server = http.createServer((req, res) => {
    seen.push({ path: req.url ?? '', headers: req.headers });
    const auth = req.headers.authorization ?? '';
    const ok = auth === `Bearer ${goodKey}` || auth === `Token ${goodKey}` || req.headers['xi-api-key'] === goodKey
      || (req.headers['x-api-key'] === goodKey && req.headers['anthropic-version'] !== undefined);
    res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' });
    res.end(ok ? '{"data":[]}' : '{"error":"bad key"}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.2', r));
  return { url: `http://127.0.0.2:${(server.address() as AddressInfo).port}`, seen, close: () => new Promise<void>((r) => server.close(() => r())) };
}

const bearer = (org: TestOrg, token: string) => ({ authorization: `Bearer ${token}`, 'x-organization-id': org.orgId });

describe('voice runtime: server side', () => {
  let carrier: CarrierStandIn;
  let app: FastifyInstance;
  let offApp: FastifyInstance;
  let provider: Awaited<ReturnType<typeof startProviderStandIn>>;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  before(async () => {
    carrier = await startCarrierStandIn();
    provider = await startProviderStandIn('good-key');
    receiver = await startReceiver({ answer: (req) => ({ status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ echo: JSON.parse(req.body || '{}') }) }) });
    const { tmpDir } = await testEnv();
    app = await buildTestApp(testConfig(tmpDir, { CARRIER_A_API_URL: carrier.url, PUBLIC_BASE_URL: PUBLIC }));
    offApp = await buildTestApp(testConfig(tmpDir, { CARRIER_A_API_URL: carrier.url, PUBLIC_BASE_URL: PUBLIC, RUNTIME: 'off' }));
  });
  after(async () => {
    await app?.close();
    await offApp?.close();
    await carrier?.close();
    await provider?.close();
    await receiver?.close();
  });

  const integration = async (org: TestOrg, body: Record<string, unknown>) =>
    app.inject({ method: 'POST', url: '/api/integrations', headers: asRole(org, 'admin'), payload: { name: 'p', ...body } });

  /**
   * An inbound call through the signed voice webhook: its TwiML's stream URL and parameters.
   * `configure` runs before the call arrives (a call runs the agent's version of then).
   */
  async function inboundCall(target: FastifyInstance, org: TestOrg, configure?: (agentId: string) => Promise<void>) {
    const { phoneNumber, agentId } = await carrierNumber(target, carrier, org);
    if (configure) await configure(agentId!);
    const params = { CallSid: carrierCallSid(), AccountSid: carrier.account.sid, From: '+14155550199', To: phoneNumber, CallStatus: 'ringing', Direction: 'inbound' };
    const res = await postCarrierForm(target, '/api/telephony/carrier_a/voice', VOICE_URL, carrier.account.token, params);
    assert.equal(res.statusCode, 200, res.body);
    return { doc: parseTwiml(res.body), agentId: agentId! };
  }

  test('integrations of the stt, tts and llm categories: create, validate against the provider (auth header checked), base_url under the outbound address rule', async () => {
    const org = await createOrg();
    const good = await integration(org, { provider: 'deepgram', credentials: { api_key: 'good-key', base_url: provider.url } });
    assert.equal(good.statusCode, 200, good.body);
    assert.equal(good.json().data.category, 'stt');
    assert.equal(JSON.stringify(good.json()).includes('good-key'), false, 'credentials are never returned');
    const validate = (id: string) => app.inject({ method: 'POST', url: `/api/integrations/${id}/validate`, headers: asRole(org, 'user', { 'content-type': 'application/json' }) });
    const ok = await validate(good.json().data.integration_id);
    assert.equal(ok.json().data.status, 'active', ok.body);
    assert.deepEqual(provider.seen.at(-1), { path: '/v1/projects', headers: provider.seen.at(-1)!.headers });
    assert.equal(provider.seen.at(-1)!.headers.authorization, 'Token good-key');
    for (const [name, credentials, header, value] of [
      ['elevenlabs', { api_key: 'good-key' }, 'xi-api-key', 'good-key'],
      ['anthropic', { api_key: 'good-key' }, 'x-api-key', 'good-key'],
      ['openai', { api_key: 'bad-key' }, 'authorization', 'Bearer bad-key'],
    ] as const) {
      const made = await integration(org, { provider: name, category: name === 'elevenlabs' ? 'tts' : 'llm', credentials: { ...credentials, base_url: provider.url } });
      assert.equal(made.statusCode, 200, made.body);
      const checked = await validate(made.json().data.integration_id);
      assert.equal(checked.json().data.status, name === 'openai' ? 'invalid' : 'active', checked.body);
      assert.equal(provider.seen.at(-1)!.headers[header], value);
    }
    // The outbound address rule: a private address outside ALLOWED_NETWORKS is refused at create and update.
    const refused = await integration(org, { provider: 'groq', credentials: { api_key: 'k', base_url: 'http://10.1.2.3:8000' } });
    assert.equal(refused.statusCode, 400, refused.body);
    assert.equal(refused.json().code, 'destination_refused');
    const updated = await app.inject({
      method: 'PATCH', url: `/api/integrations/${good.json().data.integration_id}`, headers: asRole(org, 'admin'),
      payload: { credentials: { api_key: 'k', base_url: 'http://127.0.0.1:9' } },
    });
    assert.equal(updated.statusCode, 400, updated.body);
    // Shapes: carrier credentials for a provider, a region for anything but azure, an ambiguous category.
    assert.equal((await integration(org, { provider: 'deepgram', credentials: { account_sid: 'a', auth_token: 'b' } })).statusCode, 400);
    assert.equal((await integration(org, { provider: 'deepgram', credentials: { api_key: 'k', region: 'westeurope' } })).statusCode, 400);
    assert.equal((await integration(org, { provider: 'openai', credentials: { api_key: 'k' } })).statusCode, 400);
    assert.equal((await integration(org, { provider: 'azure', category: 'tts', credentials: { api_key: 'k', region: 'westeurope' } })).statusCode, 200);
  });

  test('agent fields: defaults, round trip, integration ids must serve the provider (400 otherwise)', async () => {
    const org = await createOrg();
    const agent = await createAgent(org);
    assert.deepEqual(
      [agent.stt_integration_id, agent.tts_integration_id, agent.llm_integration_id, agent.interruptible, agent.end_call_enabled, agent.transfer_number, agent.silence_timeout_seconds],
      [null, null, null, true, true, null, 30],
    );
    const deepgram = (await integration(org, { provider: 'deepgram', credentials: { api_key: 'k' } })).json().data.integration_id;
    const openai = (await integration(org, { provider: 'openai', category: 'llm', credentials: { api_key: 'k' } })).json().data.integration_id;
    const patch = (payload: object) => app.inject({ method: 'PATCH', url: `/api/agents/${agent.agent_id}`, headers: asRole(org, 'agent_manager'), payload });
    const fine = await patch({ stt_integration_id: deepgram, llm_integration_id: openai, interruptible: false, end_call_enabled: false, transfer_number: '+14155550100', silence_timeout_seconds: 12 });
    assert.equal(fine.statusCode, 200, fine.body);
    const got = (await app.inject({ url: `/api/agents/${agent.agent_id}`, headers: asRole(org, 'user') })).json().data;
    assert.deepEqual([got.stt_integration_id, got.llm_integration_id, got.interruptible, got.end_call_enabled, got.transfer_number, got.silence_timeout_seconds],
      [deepgram, openai, false, false, '+14155550100', 12]);
    // One openai integration may serve whisper STT; a deepgram one may not serve the LLM, nor another organization's.
    assert.equal((await patch({ stt_provider: 'whisper', stt_integration_id: openai })).statusCode, 200);
    assert.equal((await patch({ llm_integration_id: deepgram })).statusCode, 400);
    assert.equal((await patch({ stt_provider: 'assemblyai' })).statusCode, 400, 'the named openai integration cannot serve assemblyai');
    const other = await createOrg();
    const foreign = (await app.inject({ method: 'POST', url: '/api/integrations', headers: asRole(other, 'admin'), payload: { name: 'x', provider: 'anthropic', credentials: { api_key: 'k' } } })).json().data.integration_id;
    assert.equal((await patch({ llm_provider: 'anthropic', llm_integration_id: foreign })).statusCode, 400);
    for (const bad of [{ silence_timeout_seconds: 4 }, { silence_timeout_seconds: 601 }, { transfer_number: '0800 123' }]) assert.equal((await patch(bad)).statusCode, 400);
  });

  test('the inbound webhook connects to the built-in runtime with a call token; the token reads its call, reports and calls tools, nothing else', async () => {
    const org = await createOrg();
    // Configure the agent (before the call: a call runs the version of its start): providers (a named deepgram, the newest elevenlabs, an openai for the llm), a tool, a document.
    let deepgram = '', newestEl = '', toolId = '';
    const configure = async (agentId: string) => {
      deepgram = (await integration(org, { provider: 'deepgram', credentials: { api_key: 'dg-key', base_url: provider.url } })).json().data.integration_id;
      await integration(org, { provider: 'elevenlabs', credentials: { api_key: 'old-el-key' } });
      newestEl = (await integration(org, { provider: 'elevenlabs', credentials: { api_key: 'new-el-key' } })).json().data.integration_id;
      const tool = await app.inject({
        method: 'POST', url: '/api/tools', headers: asRole(org, 'admin'),
        payload: { tool_name: 'lookup_order', tool_description: 'Finds an order', webhook_url: `${receiver.url}/orders`, http_method: 'POST', headers: { 'x-shop': 'k1' },
          parameters: [{ name: 'order_id', type: 'string', description: 'The order', required: true }, { name: 'express', type: 'boolean' }] },
      });
      assert.equal(tool.statusCode, 200, tool.body);
      toolId = tool.json().data.tool_id;
      await app.inject({ method: 'PATCH', url: `/api/agents/${agentId}`, headers: asRole(org, 'admin'), payload: { stt_integration_id: deepgram, tool_ids: [toolId], voice_id: 'v1' } });
    };

    const { doc, agentId } = await inboundCall(app, org, configure);
    const [stream] = children(children(doc.documentElement, 'Connect')[0]!, 'Stream');
    assert.equal(stream!.getAttribute('url'), BUILT_IN_STREAM);
    const parameters = Object.fromEntries(children(stream!, 'Parameter').map((p) => [p.getAttribute('name')!, p.getAttribute('value')!]));
    const { call_sid: callSid, token } = parameters as Record<string, string>;
    assert.equal(parameters.agent_id, agentId);
    // Its claims, read without the code under test: sub, org, agent, scope, and exp = iat + max duration (1800 default) + 300.
    const claims = JSON.parse(Buffer.from(token!.split('.')[1]!, 'base64url').toString());
    assert.deepEqual([claims.sub, claims.org, claims.agent_id, claims.scope, claims.exp - claims.iat], [callSid, org.orgId, agentId, 'runtime', 1800 + 300]);

    const config = await app.inject({ url: `/api/runtime/calls/${callSid}`, headers: bearer(org, token!) });
    assert.equal(config.statusCode, 200, config.body);
    const data = config.json().data;
    assert.equal(data.call.call_sid, callSid);
    assert.equal(data.agent.agent_id, agentId);
    assert.deepEqual([data.call.agent_version, data.agent.version], [2, 2], 'the carrier webhook records the version of the call\'s start');
    assert.deepEqual(data.providers.stt, { provider: 'deepgram', model: null, integration_id: deepgram, credentials: { api_key: 'dg-key', base_url: provider.url } });
    assert.deepEqual(data.providers.tts, { provider: 'elevenlabs', model: null, voice_id: 'v1', integration_id: newestEl, credentials: { api_key: 'new-el-key' } });
    assert.equal(data.providers.llm, null, 'no openai integration: not configured');
    assert.deepEqual(data.tools, [{ name: 'lookup_order', description: 'Finds an order', parameters: {
      type: 'object', properties: { order_id: { type: 'string', description: 'The order' }, express: { type: 'boolean' } }, required: ['order_id'] } }]);

    // The tool route calls the webhook with its method and headers under the outbound rule.
    const called = await app.inject({ method: 'POST', url: `/api/runtime/calls/${callSid}/tools/lookup_order`, headers: bearer(org, token!), payload: { arguments: { order_id: 'A-1' } } });
    assert.equal(called.statusCode, 200, called.body);
    assert.equal(called.json().data.status, 200);
    assert.deepEqual(called.json().data.body, { echo: { tool_name: 'lookup_order', arguments: { order_id: 'A-1' } } });
    assert.equal(receiver.received.at(-1)!.headers['x-shop'], 'k1');
    assert.equal((await app.inject({ method: 'POST', url: `/api/runtime/calls/${callSid}/tools/nope`, headers: bearer(org, token!), payload: {} })).statusCode, 404);

    // The report: every new field round trips.
    const transcript = [
      { role: 'agent', text: 'Hello!', start_seconds: 0, end_seconds: 1.2, interrupted: false, latency: { stt_ms: null, llm_first_token_ms: null, tts_first_byte_ms: 90, total_ms: 140 } },
      { role: 'user', text: 'Where is order A-1?', start_seconds: 1.5, end_seconds: 3 },
      { role: 'tool', text: '', start_seconds: 3.2, end_seconds: 3.4, tool: { name: 'lookup_order', arguments: { order_id: 'A-1' }, result: { shipped: true }, status: 200, duration_ms: 180 } },
      { role: 'agent', text: 'It ship', start_seconds: 3.6, end_seconds: 4, interrupted: true, latency: { stt_ms: 150, llm_first_token_ms: 250, tts_first_byte_ms: 120, total_ms: 610 } },
    ];
    const report = { status: 'in_progress', transcript, latency_p50_ms: 375, latency_p95_ms: 587, agent_version: 1 };
    const patched = await app.inject({ method: 'PATCH', url: `/api/calls/${callSid}`, headers: bearer(org, token!), payload: report });
    assert.equal(patched.statusCode, 200, patched.body);
    const ended = await app.inject({ method: 'PATCH', url: `/api/calls/${callSid}`, headers: bearer(org, token!),
      payload: { status: 'failed', end_reason: 'error', error: { provider: 'openai', code: 'not_configured', message: 'no openai integration' } } });
    assert.equal(ended.statusCode, 200, ended.body);
    const read = (await app.inject({ url: `/api/calls/${callSid}`, headers: asRole(org, 'user') })).json().data;
    assert.deepEqual([read.transcript, read.latency_p50_ms, read.latency_p95_ms, read.agent_version, read.error, read.end_reason],
      [transcript, 375, 587, 1, { provider: 'openai', code: 'not_configured', message: 'no openai integration' }, 'error']);

    // Everything else is refused: other calls, other routes, other organizations; knowledge of another agent.
    const otherCall = await createCall(org, agentId);
    assert.equal((await app.inject({ url: `/api/runtime/calls/${otherCall.call_sid}`, headers: bearer(org, token!) })).json().code, 'scope_missing');
    assert.equal((await app.inject({ method: 'PATCH', url: `/api/calls/${otherCall.call_sid}`, headers: bearer(org, token!), payload: { status: 'ringing' } })).statusCode, 403);
    for (const url of [`/api/calls/${callSid}`, '/api/agents', `/api/agents/${agentId}`, '/api/integrations', '/api/auth/me']) {
      const res = await app.inject({ url, headers: bearer(org, token!) });
      assert.equal(res.statusCode, 403, `${url}: ${res.body}`);
      assert.equal(res.json().code, 'scope_missing');
    }
    const other = await createOrg();
    assert.equal((await app.inject({ url: `/api/runtime/calls/${callSid}`, headers: bearer(other, token!) })).json().code, 'organization_forbidden');
    const otherAgent = await createAgent(org);
    const search = (agent?: string) => app.inject({ method: 'POST', url: '/api/knowledge-base/search', headers: bearer(org, token!), payload: { query: 'orders', ...(agent ? { agent_id: agent } : {}) } });
    assert.equal((await search()).statusCode, 200);
    assert.equal((await search(otherAgent.agent_id)).statusCode, 403);
    // Keys and users hold no role for the runtime routes.
    assert.equal((await app.inject({ url: `/api/runtime/calls/${callSid}`, headers: asRole(org, 'admin') })).json().code, 'permission_denied');
  });

  test('a call token is no session and a session no call token; an expired or forged call token is 401', async () => {
    const org = await createOrg();
    const call = await createCall(org, (await createAgent(org)).agent_id);
    const sign = (claims: Record<string, unknown>, options: { exp?: number; secret?: string; typ?: string; iss?: string } = {}) =>
      new SignJWT({ org: org.orgId, agent_id: call.agent_id, scope: 'runtime', ...claims })
        .setProtectedHeader({ alg: 'HS256', typ: options.typ ?? 'call+jwt' }).setSubject(call.call_sid).setIssuer(options.iss ?? 'switchboard-call')
        .setAudience('switchboard-runtime').setIssuedAt().setExpirationTime(options.exp ?? Math.floor(Date.now() / 1000) + 600)
        .sign(new TextEncoder().encode(options.secret ?? TEST_JWT_SECRET));
    const get = (token: string) => app.inject({ url: `/api/runtime/calls/${call.call_sid}`, headers: bearer(org, token) });
    assert.equal((await get(await sign({}))).statusCode, 200, 'a well-formed token of this deployment works');
    assert.equal((await get(await sign({}, { exp: Math.floor(Date.now() / 1000) - 5 }))).statusCode, 401);
    assert.equal((await get(await sign({}, { secret: 'another-deployment-secret-0123456789abcdef' }))).statusCode, 401);
    assert.equal((await get(await sign({ scope: 'admin' }))).statusCode, 401);
    // A user's token (even of an admin) is not a call token; the call token is not a user's session.
    const user = await userToken({ sub: `runtime-user-${org.orgId}` });
    assert.equal((await get(user)).statusCode, 403);
    const callToken = await sign({});
    const asSession = await app.inject({ url: '/api/auth/me', headers: { authorization: `Bearer ${callToken}` } });
    assert.equal(asSession.statusCode, 403);
  });

  test("the runtime's final report hangs up the carrier leg, or transfers it; the carrier's later status bills nothing twice", async () => {
    const org = await createOrg();
    await grantCredits(org.orgId, 100);
    const started = await balanceOf(org.orgId);
    for (const endReason of ['tool_end_call', 'transferred'] as const) {
      const { phoneNumber, agentId } = await carrierNumber(app, carrier, org);
      await app.inject({ method: 'PATCH', url: `/api/agents/${agentId}`, headers: asRole(org, 'admin'), payload: { transfer_number: '+14155550123' } });
      const carrierSid = carrierCallSid();
      const params = { CallSid: carrierSid, AccountSid: carrier.account.sid, From: '+14155550199', To: phoneNumber, CallStatus: 'ringing', Direction: 'inbound' };
      const answer = parseTwiml((await postCarrierForm(app, '/api/telephony/carrier_a/voice', VOICE_URL, carrier.account.token, params)).body);
      const stream = children(children(answer.documentElement, 'Connect')[0]!, 'Stream')[0]!;
      const p = Object.fromEntries(children(stream, 'Parameter').map((n) => [n.getAttribute('name')!, n.getAttribute('value')!]));
      const cost = { stt: 1, llm: 2, tts: 3, telephony: 1.5, platform: 0.5 };
      const report = await app.inject({ method: 'PATCH', url: `/api/calls/${p.call_sid}`, headers: bearer(org, p.token!),
        payload: { status: 'completed', end_reason: endReason, cost_breakdown: cost, duration_seconds: 42 } });
      assert.equal(report.statusCode, 200, report.body);
      const update = carrier.callUpdates.find((u) => u.callSid === carrierSid);
      assert.deepEqual(update, endReason === 'transferred'
        ? { callSid: carrierSid, status: null, twiml: '<Response><Dial>+14155550123</Dial></Response>' }
        : { callSid: carrierSid, status: 'completed', twiml: null });
      // The carrier then reports the end: the call keeps the runtime's report and is billed once.
      const statusUrl = `${PUBLIC}/api/telephony/carrier_a/status`;
      const done = await postCarrierForm(app, '/api/telephony/carrier_a/status', statusUrl, carrier.account.token, { ...params, CallStatus: 'completed', CallDuration: '44' });
      assert.equal(done.statusCode, 200, done.body);
      const call = (await app.inject({ url: `/api/calls/${p.call_sid}`, headers: asRole(org, 'user') })).json().data;
      assert.deepEqual([call.status, call.end_reason, call.total_cost, call.duration_seconds, call.billing_status], ['completed', endReason, 8, 42, 'billed']);
    }
    assert.equal(await balanceOf(org.orgId), started - 16, 'two calls of 8 credits, each billed once');
  });

  test('RUNTIME=off and no runtime URL: the call is refused and its error says why', async () => {
    const org = await createOrg();
    const { doc } = await inboundCall(offApp, org);
    assert.deepEqual(children(doc.documentElement).map((e) => e.nodeName), ['Reject']);
    const [call] = (await app.inject({ url: '/api/calls', headers: asRole(org, 'user') })).json().data;
    const full = (await app.inject({ url: `/api/calls/${call.call_sid}`, headers: asRole(org, 'user') })).json().data;
    assert.deepEqual([full.status, full.end_reason, full.error?.code, full.error?.provider], ['failed', 'error', 'no_runtime', 'runtime']);
  });
});

/** One call per organization for the matrices (a call per request would meet the concurrency limit). */
const matrixCalls = new Map<string, Promise<string>>();
const matrixCall = (org: TestOrg) => {
  if (!matrixCalls.has(org.orgId)) matrixCalls.set(org.orgId, createAgent(org).then((a) => createCall(org, a.agent_id)).then((c) => c.call_sid as string));
  return matrixCalls.get(org.orgId)!;
};
runAuthMatrix({
  method: 'GET', route: '/api/runtime/calls/{call_sid}', permission: 'runtime:call',
  path: async (org) => `/api/runtime/calls/${await matrixCall(org)}`,
});
runAuthMatrix({
  method: 'POST', route: '/api/runtime/calls/{call_sid}/tools/{tool_name}', permission: 'runtime:call',
  path: async (org) => `/api/runtime/calls/${await matrixCall(org)}/tools/lookup`,
  body: () => ({ arguments: {} }),
});
