import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { Switchboard, SwitchboardError, Webhooks, WebhookVerificationError } from '@switchboard/sdk';
import { startReceiver } from './helpers/webhook-receiver.ts';
import { toneWav } from '../src/modules/calls/recordings/audio.ts';
import { SDK_TYPES_FILE, sdkTypes } from '../scripts/sdk-types.ts';
import { buildTestApp, testConfig, testEnv } from './helpers/env.ts';
import { createOrg, uniqueEmail, uniquePhoneNumber, type TestOrg } from './helpers/fixtures.ts';
import { freePort } from './helpers/net.ts';

describe('the SDK (@switchboard/sdk, in sdk/)', () => {
  let app: FastifyInstance;
  let base: string;
  let org: TestOrg;
  let sb: Switchboard;
  before(async () => {
    const { tmpDir } = await testEnv();
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    app = await buildTestApp(testConfig(tmpDir, { PUBLIC_BASE_URL: base, CARRIER_A_API_URL: 'http://127.0.0.1:9', CARRIER_A_TIMEOUT_MS: '300' }));
    await app.listen({ host: '127.0.0.1', port });
    org = await createOrg('SDK users');
    sb = new Switchboard({ baseUrl: base, apiKey: org.keys.admin, organizationId: org.orgId });
  });
  after(() => app?.close());

  test('its types are generated from the current OpenAPI document (npm run sdk:generate)', async () => {
    assert.equal(fs.readFileSync(SDK_TYPES_FILE, 'utf8'), await sdkTypes(app.swagger()), 'sdk/src/schema.ts is stale: run npm run sdk:generate');
  });

  test('agents, tools, integrations and phone numbers: create, list by iterator, get, update, delete', async () => {
    const tool = await sb.tools.create({ tool_name: 'lookup_order', tool_description: 'Finds an order', webhook_url: 'https://example.com/hook', http_method: 'POST' });
    const agent = await sb.agents.create({ agent_name: 'Front desk', tool_ids: [tool.tool_id] });
    assert.deepEqual(agent.tool_ids, [tool.tool_id]);
    assert.equal((await sb.agents.update(agent.agent_id, { language: 'de' })).language, 'DE');
    const listed = [];
    for await (const item of sb.agents.list({ page_size: 1 })) listed.push(item.agent_id);
    assert.deepEqual(listed, [agent.agent_id]);
    const integration = await sb.integrations.create({ name: 'Carrier', provider: 'carrier_a', credentials: { account_sid: 'AC123', auth_token: 'secret' } });
    const validated = await sb.integrations.validate(integration.integration_id);
    assert.equal(validated.data.status, 'invalid', 'the carrier is unreachable here');
    const number = await sb.phoneNumbers.import({
      phone_number: uniquePhoneNumber(), provider: 'sip', supports_inbound: true, supports_outbound: false,
      sip_trunk_name: 'Office', sip_username: 'office', sip_password: 'secret-password', inbound_room_name: 'office-',
    });
    assert.equal((await sb.phoneNumbers.update(number.phone_number_id, { agent_id: agent.agent_id })).status, 'assigned');
    const refused = await sb.agents.delete(agent.agent_id).catch((err: unknown) => err);
    assert.ok(refused instanceof SwitchboardError);
    assert.equal(refused.status, 409);
    assert.equal(refused.code, 'agent_has_phone_numbers');
    await sb.phoneNumbers.update(number.phone_number_id, { agent_id: null });
    await sb.phoneNumbers.delete(number.phone_number_id);
    await sb.agents.delete(agent.agent_id);
    await sb.tools.delete(tool.tool_id);
    await sb.integrations.delete(integration.integration_id);
    const missing = await sb.agents.get(agent.agent_id).catch((err: unknown) => err);
    assert.ok(missing instanceof SwitchboardError && missing.status === 404 && missing.code === 'not_found');
    const invalid = await sb.agents.create({ agent_name: '' }).catch((err: unknown) => err);
    assert.ok(invalid instanceof SwitchboardError && invalid.code === 'validation_error');
    assert.equal(invalid.errors[0]?.path, 'body.agent_name');
  });

  test('the knowledge base: text, and files from a path, a Blob and a stream, indexed and searched', async () => {
    const { tmpDir } = await testEnv();
    const file = path.join(tmpDir, 'hours.md');
    fs.writeFileSync(file, '# Hours\n\nThe clinic opens at eight on weekdays and closes at noon on Saturdays.');
    const documents = [
      await sb.knowledgeBase.createText({ name: 'Parking', text: 'Visitors park behind the building, level minus one.' }),
      await sb.knowledgeBase.upload({ name: 'Hours', file }),
      await sb.knowledgeBase.upload({ name: 'Prices', file: new Blob(['Cleaning costs 80 euros; whitening 250 euros.']), filename: 'prices.txt' }),
      await sb.knowledgeBase.upload({ name: 'Staff', file: Readable.from([Buffer.from('Dr. Alvarez treats children '), Buffer.from('on Tuesdays.')]), filename: 'staff.txt' }),
    ];
    for (const created of documents) assert.equal((await sb.knowledgeBase.waitForIndexing(created.documentation_id)).processing_status, 'completed');
    const hits = await sb.knowledgeBase.search({ query: 'children Tuesdays Alvarez', top_k: 3 });
    assert.equal(hits[0]?.documentation_id, documents[3]!.documentation_id);
    const names = [];
    for await (const document of sb.knowledgeBase.list({ page_size: 2, sort_by: 'name', sort_direction: 'asc' })) names.push(document.name);
    assert.deepEqual(names, ['Hours', 'Parking', 'Prices', 'Staff']);
  });

  test('calls: a thousand paged through with for await; reports, a streamed recording, its link and its download', async () => {
    const agent = await sb.agents.create({ agent_name: 'Pager', recording_enabled: true });
    const { database } = await testEnv();
    await database.pool.query(`INSERT INTO calls (call_sid, client_id, agent_id, agent_name, call_type, status, to_number, recording_enabled, created_at, updated_at)
      SELECT 'call_sdk' || lpad(g::text, 16, '0'), $1, $2, 'Pager', 'inbound', 'completed', '+14155550100', false, now() - g * interval '1 second', now()
      FROM generate_series(1, 1000) g`, [org.orgId, agent.agent_id]);
    const seen: string[] = [];
    for await (const call of sb.calls.list({ agent_id: agent.agent_id, limit: 100 })) seen.push(call.call_sid);
    assert.equal(seen.length, 1000);
    assert.equal(new Set(seen).size, 1000);
    assert.deepEqual(seen.slice(0, 2), ['call_sdk0000000000000001', 'call_sdk0000000000000002'], 'newest first');

    const call = await sb.calls.create({ agent_id: agent.agent_id, call_type: 'outbound', to_number: '+14155550123' });
    await sb.calls.update(call.call_sid, { status: 'in_progress' });
    const audio = toneWav(1, 440);
    const { tmpDir } = await testEnv();
    const file = path.join(tmpDir, 'sdk-recording.wav');
    fs.writeFileSync(file, audio);
    assert.equal((await sb.calls.uploadRecording(call.call_sid, file)).recording_bytes, audio.length);
    assert.equal((await sb.calls.uploadRecording(call.call_sid, new Blob([audio]))).recording_bytes, audio.length);
    const link = await sb.calls.recordingLink(call.call_sid);
    assert.equal((await fetch(link.url)).status, 200, 'the link plays without credentials');
    const download = await sb.calls.downloadRecording(call.call_sid);
    assert.ok(Buffer.from(await download.arrayBuffer()).equals(audio));
    const ended = await sb.calls.update(call.call_sid, { status: 'completed', end_reason: 'agent_hangup' });
    assert.equal(ended.status, 'completed');
    assert.equal((await sb.calls.get(call.call_sid)).has_recording, true);
    // A call with no transcript has nothing to analyze: the contract's 409 no_transcript (§13).
    const unanalyzable = await sb.calls.analyze(call.call_sid).catch((err: unknown) => err);
    assert.ok(unanalyzable instanceof SwitchboardError && unanalyzable.status === 409 && unanalyzable.code === 'no_transcript', String(unanalyzable));
    // A bulk rerun over calls with no transcript gathers none and completes (§13).
    const job = await sb.calls.analyzeMatching({ agent_id: agent.agent_id });
    assert.match(job.job_id, /^caj_[0-9a-f]{12}$/);
    let progress = await sb.calls.analysisJob(job.job_id);
    for (const deadline = Date.now() + 20_000; progress.status !== 'completed' && Date.now() < deadline; progress = await sb.calls.analysisJob(job.job_id)) {
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.deepEqual([progress.status, progress.total, progress.completed], ['completed', 0, 0]);
    const series = await sb.analytics.daily({ timezone: 'UTC' });
    assert.equal(series.daily.length, 31);
  });

  test('billing, API keys, the team and the caller', async () => {
    const key = `sdk-${Date.now()}`;
    const first = await sb.billing.purchase(10, { idempotencyKey: key });
    const again = await sb.billing.purchase(10, { idempotencyKey: key });
    assert.equal(again.session_id, first.session_id);
    assert.equal((await sb.billing.credits()).balance, 0);
    const created = await sb.apiKeys.create({ name: 'ci', role: 'user' });
    assert.match(created.key, /^sk_/);
    assert.equal((await sb.apiKeys.revoke(created.key_id)).status, 'revoked');
    const keys = [];
    for await (const item of sb.apiKeys.list()) keys.push(item.key_id);
    assert.ok(keys.includes(created.key_id));
    const invitation = await sb.team.invite({ email: uniqueEmail('sdk'), role: 'user' });
    assert.ok((await sb.team.invitations()).some((i) => i.invite_id === invitation.invite_id));
    assert.equal((await sb.team.cancelInvitation(invitation.invite_id)).status, 'cancelled');
    const members = [];
    for await (const member of sb.team.members()) members.push(member.user_id);
    assert.deepEqual(members, [org.userId]);
    assert.equal((await sb.me()).user_id, org.userId);
  });

  test('events and webhooks: an endpoint, its test delivery verified by Webhooks.verify, the event listed', async () => {
    const receiver = await startReceiver();
    try {
      const hook = await sb.webhooks.create({ url: `${receiver.url}/sdk`, event_types: ['webhook.test'] });
      assert.match(hook.secret, /^whsec_/);
      const delivery = await sb.webhooks.test(hook.webhook_id);
      assert.equal(delivery.status, 'succeeded');
      const request = receiver.received.at(-1)!;
      const event = Webhooks.verify(hook.secret, request.body, request.headers);
      assert.equal(event.id, delivery.event_id);
      assert.throws(() => Webhooks.verify(hook.secret, `${request.body} `, request.headers), WebhookVerificationError);
      assert.equal((await sb.events.get(event.id)).type, 'webhook.test');
      const listed = [];
      for await (const e of sb.events.list({ type: ['webhook.test'] })) listed.push(e.id);
      assert.deepEqual(listed, [event.id]);
      const log = [];
      for await (const d of sb.webhooks.deliveries(hook.webhook_id)) log.push(d.delivery_id);
      assert.deepEqual(log, [delivery.delivery_id]);
      assert.equal((await sb.webhooks.retry(hook.webhook_id, delivery.delivery_id)).attempts.length, 2);
      assert.notEqual((await sb.webhooks.rotateSecret(hook.webhook_id)).secret, hook.secret);
      assert.equal((await sb.webhooks.delete(hook.webhook_id)).webhook_id, hook.webhook_id);
    } finally {
      await receiver.close();
    }
  });

  test('a 429 and a 503 are retried after Retry-After with the same Idempotency-Key: the agent is created once', async () => {
    const attempts: Array<{ method: string; key: string | undefined }> = [];
    let refusals = 0;
    const proxy = http.createServer((req, res) => {
      attempts.push({ method: req.method!, key: req.headers['idempotency-key'] as string | undefined });
      if (req.method === 'POST' && refusals < 2) {
        const status = refusals++ === 0 ? 429 : 503;
        req.resume();
        res.writeHead(status, { 'content-type': 'application/json', 'retry-after': '1' }).end(JSON.stringify({ detail: 'later', code: status === 429 ? 'rate_limited' : 'unavailable' }));
        return;
      }
      const upstream = http.request(`${base}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      });
      req.pipe(upstream);
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    try {
      const viaProxy = new Switchboard({ baseUrl: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, apiKey: org.keys.admin, organizationId: org.orgId });
      const name = `Retried ${Date.now()}`;
      const started = Date.now();
      const agent = await viaProxy.agents.create({ agent_name: name });
      assert.ok(Date.now() - started >= 1900, 'it waited as Retry-After said, twice');
      const posts = attempts.filter((a) => a.method === 'POST');
      assert.equal(posts.length, 3);
      assert.ok(posts[0]!.key && posts.every((a) => a.key === posts[0]!.key), 'one Idempotency-Key for the logical request');
      const named = [];
      for await (const item of sb.agents.list()) if (item.agent_name === name) named.push(item.agent_id);
      assert.deepEqual(named, [agent.agent_id]);
    } finally {
      proxy.close();
    }
  });

  test('a timeout or an abort ends a request that gets no answer', async () => {
    const silent = http.createServer(() => {});
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const slow = new Switchboard({ baseUrl: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`, apiKey: org.keys.admin, organizationId: org.orgId, timeoutMs: 300, maxRetries: 0 });
      await assert.rejects(slow.agents.get('agent_a1b2c3d4e5f6'), (err: Error) => err.name === 'TimeoutError');
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 100);
      await assert.rejects(slow.withOptions({ signal: controller.signal, timeoutMs: 10_000 }).agents.get('agent_a1b2c3d4e5f6'), (err: Error) => err.name === 'AbortError');
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
  });
});
