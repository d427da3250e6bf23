import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { provisionOrganization } from '../src/modules/organizations/service.ts';
import { runAuthMatrix } from './helpers/auth-matrix.ts';
import { createCall } from './helpers/calls.ts';
import { testClock, testEnv } from './helpers/env.ts';
import { asRole, createAgent, createOrg, keyHeaders, uniqueEmail, type TestOrg } from './helpers/fixtures.ts';
import { startReceiver, type Receiver } from './helpers/webhook-receiver.ts';

const RECEIVER = 'http://127.0.0.2:9/hooks'; // an allowed address; nothing needs to listen for the matrix

async function newWebhook(org: TestOrg, body: Record<string, unknown> = {}) {
  const { app } = await testEnv();
  const res = await app.inject({ method: 'POST', url: '/api/webhooks', headers: asRole(org, 'admin'), payload: { url: RECEIVER, ...body } });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data as { webhook_id: string; secret: string; url: string };
}

async function deliveryOf(org: TestOrg) {
  const { app } = await testEnv();
  const hook = await newWebhook(org);
  const res = await app.inject({ method: 'POST', url: `/api/webhooks/${hook.webhook_id}/test`, headers: asRole(org, 'admin') });
  return { hook, delivery: res.json().data as { delivery_id: string } };
}

const hookPath = (suffix = '') => async (org: TestOrg) => `/api/webhooks/${(await newWebhook(org)).webhook_id}${suffix}`;

runAuthMatrix({ method: 'POST', route: '/api/webhooks', path: () => '/api/webhooks', body: () => ({ url: RECEIVER }), permission: 'webhooks:write' });
runAuthMatrix({ method: 'GET', route: '/api/webhooks', path: () => '/api/webhooks', permission: 'webhooks:read' });
runAuthMatrix({ method: 'GET', route: '/api/webhooks/{webhook_id}', path: hookPath(), permission: 'webhooks:read', foreignStatus: 404 });
runAuthMatrix({ method: 'PATCH', route: '/api/webhooks/{webhook_id}', path: hookPath(), body: () => ({ description: 'x' }), permission: 'webhooks:write', foreignStatus: 404 });
runAuthMatrix({ method: 'DELETE', route: '/api/webhooks/{webhook_id}', path: hookPath(), permission: 'webhooks:write', foreignStatus: 404 });
runAuthMatrix({ method: 'POST', route: '/api/webhooks/{webhook_id}/rotate-secret', path: hookPath('/rotate-secret'), permission: 'webhooks:write', foreignStatus: 404 });
runAuthMatrix({ method: 'POST', route: '/api/webhooks/{webhook_id}/test', path: hookPath('/test'), permission: 'webhooks:write', foreignStatus: 404 });
runAuthMatrix({ method: 'GET', route: '/api/webhooks/{webhook_id}/deliveries', path: hookPath('/deliveries'), permission: 'webhooks:read', foreignStatus: 404 });
runAuthMatrix({
  method: 'POST', route: '/api/webhooks/{webhook_id}/deliveries/{delivery_id}/retry', permission: 'webhooks:write', foreignStatus: 404,
  path: async (org) => {
    const { hook, delivery } = await deliveryOf(org);
    return `/api/webhooks/${hook.webhook_id}/deliveries/${delivery.delivery_id}/retry`;
  },
});

/** Polls the delivery log until `until` holds for the endpoint's deliveries. */
async function waitForDeliveries(org: TestOrg, webhookId: string, until: (d: any[]) => boolean, timeoutMs = 30_000): Promise<any[]> {
  const { app } = await testEnv();
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await app.inject({ url: `/api/webhooks/${webhookId}/deliveries?limit=100`, headers: keyHeaders(org, org.adminKey) });
    assert.equal(res.statusCode, 200, res.body);
    const data = res.json().data;
    if (until(data)) return data;
    if (Date.now() > deadline) throw new Error(`deliveries never met the condition: ${JSON.stringify(data)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('webhook endpoints: management', () => {
  test('create shows the secret once (whsec_ + base64 of 24 bytes); list and get never; PATCH changes fields; DELETE removes', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const agent = await createAgent(org);
    const res = await app.inject({ method: 'POST', url: '/api/webhooks', headers: asRole(org, 'admin'), payload: {
      url: RECEIVER, description: 'CRM sync', event_types: ['call.ended'], agent_ids: [agent.agent_id],
    } });
    assert.equal(res.statusCode, 200, res.body);
    const created = res.json().data;
    assert.match(created.webhook_id, /^whk_[a-f0-9]{12}$/);
    assert.match(created.secret, /^whsec_[A-Za-z0-9+/]+=*$/);
    assert.equal(Buffer.from(created.secret.slice(6), 'base64').length, 24);
    assert.deepEqual({ ...created, secret: undefined, created_at: undefined, updated_at: undefined }, {
      webhook_id: created.webhook_id, url: RECEIVER, description: 'CRM sync', event_types: ['call.ended'], agent_ids: [agent.agent_id],
      enabled: true, disabled_reason: null, client_id: org.orgId, secret: undefined, created_at: undefined, updated_at: undefined,
    });
    const list = await app.inject({ url: '/api/webhooks', headers: asRole(org, 'agent_manager') });
    assert.equal(list.json().data.length, 1);
    assert.ok(!list.body.includes(created.secret));
    const got = await app.inject({ url: `/api/webhooks/${created.webhook_id}`, headers: asRole(org, 'agent_manager') });
    assert.equal(got.json().data.secret, undefined);

    const patched = await app.inject({ method: 'PATCH', url: `/api/webhooks/${created.webhook_id}`, headers: asRole(org, 'admin'), payload: { event_types: [], enabled: false } });
    assert.equal(patched.json().data.enabled, false);
    assert.equal(patched.json().data.disabled_reason, 'manual');
    assert.deepEqual(patched.json().data.event_types, []);
    const enabled = await app.inject({ method: 'PATCH', url: `/api/webhooks/${created.webhook_id}`, headers: asRole(org, 'admin'), payload: { enabled: true } });
    assert.equal(enabled.json().data.disabled_reason, null);
    assert.equal((await app.inject({ method: 'DELETE', url: `/api/webhooks/${created.webhook_id}`, headers: asRole(org, 'admin') })).statusCode, 200);
    assert.equal((await app.inject({ url: `/api/webhooks/${created.webhook_id}`, headers: asRole(org, 'admin') })).statusCode, 404);
  });

  test('bad input → 400 with the field: a long url, an unknown event type, a long description, an agent of no one, an unknown field', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ url: `https://example.com/${'a'.repeat(2000)}` }, 'body.url'],
      [{ url: RECEIVER, event_types: ['call.exploded'] }, 'body.event_types.0'],
      [{ url: RECEIVER, description: 'd'.repeat(501) }, 'body.description'],
      [{ url: RECEIVER, agent_ids: ['agent_000000000000'] }, 'body.agent_ids.0'],
      [{ url: RECEIVER, colour: 'red' }, 'body.colour'],
      [{ url: 'not a url' }, 'body.url'],
    ];
    for (const [payload, path] of cases) {
      const res = await app.inject({ method: 'POST', url: '/api/webhooks', headers: asRole(org, 'admin'), payload });
      assert.equal(res.statusCode, 400, `${path}: ${res.body}`);
      assert.ok(res.json().errors?.some((e: any) => e.path === path), `${path}: ${res.body}`);
    }
  });

  test('loopback, private, link-local and metadata URLs are refused at create (400 destination_refused), and plain http outside the allow-list', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    for (const url of [
      'http://127.0.0.1:8080/hook', 'https://127.0.0.1/hook', 'https://localhost/hook', 'https://10.1.2.3/hook', 'https://169.254.169.254/latest',
      'https://[::1]/hook', 'https://[::ffff:127.0.0.1]/hook', 'https://192.168.1.10/', 'http://93.184.215.14/hook', 'ftp://127.0.0.2/x',
    ]) {
      const res = await app.inject({ method: 'POST', url: '/api/webhooks', headers: asRole(org, 'admin'), payload: { url } });
      assert.equal(res.statusCode, 400, `${url}: ${res.body}`);
      assert.equal(res.json().code, 'destination_refused', url);
    }
    const hook = await newWebhook(org);
    const patch = await app.inject({ method: 'PATCH', url: `/api/webhooks/${hook.webhook_id}`, headers: asRole(org, 'admin'), payload: { url: 'https://127.0.0.1/' } });
    assert.equal(patch.json().code, 'destination_refused');
  });

  test("another organization's endpoint and delivery are 404 on every route", async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const other = await createOrg();
    const { hook, delivery } = await deliveryOf(other);
    const mine = await newWebhook(org);
    const h = asRole(org, 'admin');
    for (const [method, url] of [
      ['GET', `/api/webhooks/${hook.webhook_id}`], ['PATCH', `/api/webhooks/${hook.webhook_id}`], ['DELETE', `/api/webhooks/${hook.webhook_id}`],
      ['POST', `/api/webhooks/${hook.webhook_id}/rotate-secret`], ['POST', `/api/webhooks/${hook.webhook_id}/test`],
      ['GET', `/api/webhooks/${hook.webhook_id}/deliveries`], ['POST', `/api/webhooks/${hook.webhook_id}/deliveries/${delivery.delivery_id}/retry`],
      ['POST', `/api/webhooks/${mine.webhook_id}/deliveries/${delivery.delivery_id}/retry`],
    ] as const) {
      const res = await app.inject({ method, url, headers: h, ...(method === 'PATCH' ? { payload: { description: 'x' } } : {}) });
      assert.equal(res.statusCode, 404, `${method} ${url}: ${res.body}`);
    }
    assert.equal((await app.inject({ url: '/api/webhooks', headers: h })).json().data.length, 1);
    assert.equal((await app.inject({ url: `/api/webhooks/${hook.webhook_id}`, headers: asRole(other, 'admin') })).statusCode, 200, 'still there');
  });
});

describe('webhook deliveries against a receiver on 127.0.0.2', () => {
  let receiver: Receiver;
  const answers = new Map<string, (n: number) => any>();
  let n = 0;
  before(async () => {
    // Each test routes its own path to its own behaviour; the receiver verifies every request.
    receiver = await startReceiver({ answer: (req) => answers.get(req.path)?.(++n) ?? { status: 200, body: 'ok' } });
  });
  after(() => receiver.close());

  async function endpoint(org: TestOrg, path: string, body: Record<string, unknown> = {}) {
    const { app } = await testEnv();
    const res = await app.inject({ method: 'POST', url: '/api/webhooks', headers: asRole(org, 'admin'), payload: { url: `${receiver.url}${path}`, ...body } });
    assert.equal(res.statusCode, 200, res.body);
    receiver.secrets.push(res.json().data.secret);
    return res.json().data as { webhook_id: string; secret: string };
  }
  const at = (path: string) => receiver.received.filter((r) => r.path === path);

  test('503 then 200: delivered on the retry, two attempts in the log, the same webhook-id both times', async () => {
    const org = await createOrg();
    let calls = 0;
    answers.set('/flaky', () => (++calls === 1 ? { status: 503, body: 'down for maintenance' } : { status: 200, body: 'thanks' }));
    const hook = await endpoint(org, '/flaky');
    await createAgent(org);
    const [delivery] = await waitForDeliveries(org, hook.webhook_id, (d) => d[0]?.status === 'succeeded');
    assert.equal(delivery.event_type, 'agent.created');
    assert.equal(delivery.attempts.length, 2);
    assert.deepEqual(delivery.attempts.map((a: any) => [a.attempt, a.status_code, a.response_body]), [[1, 503, 'down for maintenance'], [2, 200, 'thanks']]);
    assert.equal(delivery.next_attempt_at, null);
    const requests = at('/flaky');
    assert.equal(requests.length, 2);
    assert.equal(requests[0]!.headers['webhook-id'], requests[1]!.headers['webhook-id']);
    assert.equal(requests[0]!.headers['webhook-id'], delivery.event_id);
    assert.ok(requests.every((r) => r.verifiedWith.includes(hook.secret)));
    const retrying = await waitForDeliveries(org, hook.webhook_id, () => true);
    assert.equal(retrying[0].status, 'succeeded');
  });

  test('410 Gone disables the endpoint at once ("gone"); later events are not delivered to it', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    answers.set('/gone', () => ({ status: 410 }));
    const hook = await endpoint(org, '/gone');
    await createAgent(org);
    const [delivery] = await waitForDeliveries(org, hook.webhook_id, (d) => d[0]?.status === 'failed');
    assert.equal(delivery.attempts.length, 1);
    const got = (await app.inject({ url: `/api/webhooks/${hook.webhook_id}`, headers: asRole(org, 'admin') })).json().data;
    assert.equal(got.enabled, false);
    assert.equal(got.disabled_reason, 'gone');
    await createAgent(org);
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(at('/gone').length, 1);
    assert.equal((await waitForDeliveries(org, hook.webhook_id, () => true)).length, 1);
  });

  test('a receiver that hangs past the timeout is a failed attempt ("timed out"), retried, and delivered when it answers', async () => {
    const org = await createOrg();
    let calls = 0;
    answers.set('/slow', () => (++calls === 1 ? 'hang' : { status: 204 }));
    const hook = await endpoint(org, '/slow');
    await createAgent(org);
    const [delivery] = await waitForDeliveries(org, hook.webhook_id, (d) => d[0]?.status === 'succeeded');
    assert.equal(delivery.attempts[0].status_code, null);
    assert.match(delivery.attempts[0].error, /timed out/);
    assert.ok(delivery.attempts[0].duration_ms >= 1900, `${delivery.attempts[0].duration_ms} ms`);
    assert.equal(delivery.attempts[1].status_code, 204);
  });

  test('a redirect is not followed: the attempt fails with its 302, the target gets nothing', async () => {
    const org = await createOrg();
    answers.set('/moved', () => ({ status: 302, headers: { location: `${receiver.url}/target` } }));
    const hook = await endpoint(org, '/moved', { event_types: ['agent.created'] });
    await createAgent(org);
    const [delivery] = await waitForDeliveries(org, hook.webhook_id, (d) => d[0]?.attempts.length >= 1);
    assert.equal(delivery.attempts[0].status_code, 302);
    assert.match(delivery.attempts[0].error, /redirect .* not followed/);
    assert.equal(at('/target').length, 0);
  });

  test('an address that became loopback after create is refused at delivery (a failed attempt), and nothing reaches it', async () => {
    const { database } = await testEnv();
    const org = await createOrg();
    const loopback = await startReceiver({ host: '127.0.0.1' });
    try {
      const hook = await endpoint(org, '/rebind');
      // As if its DNS name now answered 127.0.0.1: the delivery checks again where it connects.
      await database.pool.query('UPDATE webhook_endpoints SET url = $1 WHERE id = $2', [`${loopback.url}/hook`, hook.webhook_id]);
      await createAgent(org);
      const [delivery] = await waitForDeliveries(org, hook.webhook_id, (d) => d[0]?.attempts.length >= 1);
      assert.equal(delivery.attempts[0].status_code, null);
      assert.match(delivery.attempts[0].error, /destination refused/);
      assert.equal(loopback.received.length, 0);
    } finally {
      await loopback.close();
    }
  });

  test('test and retry: webhook.test comes back with its attempt; a retry re-sends the same event id with a new signature', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const hook = await endpoint(org, '/replay');
    const res = await app.inject({ method: 'POST', url: `/api/webhooks/${hook.webhook_id}/test`, headers: asRole(org, 'admin') });
    assert.equal(res.statusCode, 200, res.body);
    const delivery = res.json().data;
    assert.match(delivery.delivery_id, /^dlv_[A-Za-z0-9]{20}$/);
    assert.equal(delivery.event_type, 'webhook.test');
    assert.equal(delivery.status, 'succeeded');
    assert.equal(delivery.attempts[0].status_code, 200);
    assert.deepEqual(at('/replay')[0]!.event.data, { webhook_id: hook.webhook_id });
    await new Promise((r) => setTimeout(r, 1100)); // a new second: a new timestamp
    const again = await app.inject({ method: 'POST', url: `/api/webhooks/${hook.webhook_id}/deliveries/${delivery.delivery_id}/retry`, headers: asRole(org, 'admin') });
    assert.equal(again.statusCode, 200, again.body);
    assert.equal(again.json().data.attempts.length, 2);
    const [first, second] = at('/replay');
    assert.equal(second!.headers['webhook-id'], first!.headers['webhook-id']);
    assert.notEqual(second!.headers['webhook-timestamp'], first!.headers['webhook-timestamp']);
    assert.notEqual(second!.headers['webhook-signature'], first!.headers['webhook-signature']);
    assert.ok(second!.verifiedWith.includes(hook.secret));
    const filtered = await app.inject({ url: `/api/webhooks/${hook.webhook_id}/deliveries?status=failed`, headers: asRole(org, 'admin') });
    assert.equal(filtered.json().data.length, 0);
    const byType = await app.inject({ url: `/api/webhooks/${hook.webhook_id}/deliveries?event_type=webhook.test`, headers: asRole(org, 'admin') });
    assert.equal(byType.json().data.length, 1);
  });

  test('rotation: for 24 hours both secrets sign (two signatures, each verifies); after that only the new one', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const hook = await endpoint(org, '/rotate');
    const rotated = await app.inject({ method: 'POST', url: `/api/webhooks/${hook.webhook_id}/rotate-secret`, headers: asRole(org, 'admin') });
    assert.equal(rotated.statusCode, 200, rotated.body);
    const fresh = rotated.json().data.secret;
    assert.notEqual(fresh, hook.secret);
    receiver.secrets.push(fresh);
    await app.inject({ method: 'POST', url: `/api/webhooks/${hook.webhook_id}/test`, headers: asRole(org, 'admin') });
    const during = at('/rotate')[0]!;
    assert.equal(String(during.headers['webhook-signature']).split(' ').length, 2);
    for (const secret of [hook.secret, fresh]) {
      assert.doesNotThrow(() => new StandardWebhook(secret).verify(during.body, during.headers as Record<string, string>), 'each secret verifies alone');
    }
    testClock.offsetMs = 24 * 3_600_000 + 60_000;
    try {
      await app.inject({ method: 'POST', url: `/api/webhooks/${hook.webhook_id}/test`, headers: asRole(org, 'admin') });
    } finally {
      testClock.offsetMs = 0;
    }
    const afterwards = at('/rotate')[1]!;
    assert.equal(String(afterwards.headers['webhook-signature']).split(' ').length, 1);
    const timestamp = new Date(Number(afterwards.headers['webhook-timestamp']) * 1000);
    const oldSignature = new StandardWebhook(hook.secret).sign(String(afterwards.headers['webhook-id']), timestamp, afterwards.body);
    assert.notEqual(afterwards.headers['webhook-signature'], oldSignature);
    assert.equal(afterwards.headers['webhook-signature'], new StandardWebhook(fresh).sign(String(afterwards.headers['webhook-id']), timestamp, afterwards.body));
  });

  test('filters: event_types and agent_ids (agent_ids only filter call.* and recording.*)', async () => {
    const org = await createOrg();
    const wanted = await createAgent(org, { agent_name: 'Wanted' });
    const other = await createAgent(org, { agent_name: 'Other' });
    const onlyAgents = await endpoint(org, '/only-agents', { event_types: ['agent.updated'] });
    const oneAgent = await endpoint(org, '/one-agent', { agent_ids: [wanted.agent_id] });
    const { app } = await testEnv();
    await app.inject({ method: 'PATCH', url: `/api/agents/${other.agent_id}`, headers: asRole(org, 'admin'), payload: { agent_name: 'Other 2' } });
    const kept = await createCall(org, wanted.agent_id);
    await createCall(org, other.agent_id);
    await waitForDeliveries(org, oneAgent.webhook_id, (d) => d.length === 2 && d.every((x) => x.status === 'succeeded'));
    await waitForDeliveries(org, onlyAgents.webhook_id, (d) => d.length === 1 && d[0].status === 'succeeded');
    assert.deepEqual(at('/only-agents').map((r) => r.event.type), ['agent.updated']);
    const types = at('/one-agent').map((r) => `${r.event.type}:${r.event.data.call_sid ?? r.event.data.agent_id}`).sort();
    assert.deepEqual(types, [`agent.updated:${other.agent_id}`, `call.created:${kept.call_sid}`].sort());
  });

  test('an organization with a dozen endpoints: each enabled one that wants the event gets it once', async () => {
    const org = await createOrg();
    const { app } = await testEnv();
    const wanting = [];
    for (let i = 0; i < 11; i++) wanting.push(await endpoint(org, `/many-${i}`, { event_types: i % 2 ? ['agent.created'] : [] }));
    const disabled = await endpoint(org, '/many-disabled');
    await app.inject({ method: 'PATCH', url: `/api/webhooks/${disabled.webhook_id}`, headers: asRole(org, 'admin'), payload: { enabled: false } });
    const uninterested = await endpoint(org, '/many-uninterested', { event_types: ['call.ended'] });
    const agent = await createAgent(org, { agent_name: 'Announced' });
    for (const hook of wanting) await waitForDeliveries(org, hook.webhook_id, (d) => d.length === 1 && d[0].status === 'succeeded');
    for (let i = 0; i < 11; i++) {
      assert.deepEqual(at(`/many-${i}`).map((r) => `${r.event.type}:${r.event.data.agent_id}`), [`agent.created:${agent.agent_id}`]);
    }
    const event = at('/many-0')[0]!.event.id;
    assert.ok(wanting.every((_, i) => at(`/many-${i}`)[0]!.event.id === event), 'one event, the same webhook-id everywhere');
    for (const hook of [disabled, uninterested]) {
      assert.deepEqual((await app.inject({ url: `/api/webhooks/${hook.webhook_id}/deliveries`, headers: asRole(org, 'admin') })).json().data, []);
    }
  });

  test('an endpoint whose deliveries all failed for 5 days is disabled ("failing") and its admins are emailed', async () => {
    const { app, database } = await testEnv();
    const email = uniqueEmail('admin');
    const created = await provisionOrganization(database.db, { name: 'Failing Co', email });
    const org = { orgId: created.organization_id, userId: created.user_id, adminKey: created.api_key.key, keys: { admin: created.api_key.key } } as TestOrg;
    const h = keyHeaders(org, org.adminKey);
    answers.set('/broken', () => ({ status: 500, body: 'boom' }));
    const res = await app.inject({ method: 'POST', url: '/api/webhooks', headers: h, payload: { url: `${receiver.url}/broken`, event_types: ['agent.created'] } });
    const hook = res.json().data;
    await app.inject({ method: 'POST', url: '/api/agents', headers: h, payload: { agent_name: 'One' } });
    await waitForDeliveries(org, hook.webhook_id, (d) => d[0]?.attempts.length >= 1);
    testClock.offsetMs = 5 * 86_400_000 + 60_000;
    try {
      const [delivery] = await waitForDeliveries(org, hook.webhook_id, (d) => d[0]?.status === 'failed');
      assert.ok(delivery.attempts.length >= 2);
    } finally {
      testClock.offsetMs = 0;
    }
    const got = (await app.inject({ url: `/api/webhooks/${hook.webhook_id}`, headers: h })).json().data;
    assert.equal(got.enabled, false);
    assert.equal(got.disabled_reason, 'failing');
    const deadline = Date.now() + 20_000;
    let mail;
    while (!mail && Date.now() < deadline) {
      mail = (await database.pool.query('SELECT * FROM outbox_emails WHERE "to" = $1', [email])).rows[0];
      if (!mail) await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(mail, 'the admin got an email');
    assert.match(mail.text, new RegExp(hook.webhook_id));
  });
});
