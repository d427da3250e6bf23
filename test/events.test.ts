import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { toneWav } from '../src/modules/calls/recordings/audio.ts';
import { runAuthMatrix } from './helpers/auth-matrix.ts';
import { createCall, grantCredits, patchCall, uploadRecording } from './helpers/calls.ts';
import { createTextDocument, uploadFile, waitForProcessing } from './helpers/documents.ts';
import { testEnv } from './helpers/env.ts';
import { asRole, createAgent, createOrg, uniqueEmail, uniquePhoneNumber, userToken, type TestOrg } from './helpers/fixtures.ts';
import { startReceiver, type Receiver } from './helpers/webhook-receiver.ts';
import { transaction } from '../src/db/unit-of-work.ts';

/** Registers an endpoint through the API and teaches the receiver its secret. */
export async function registerWebhook(org: TestOrg, receiver: Receiver, body: Record<string, unknown> = {}) {
  const { app } = await testEnv();
  const res = await app.inject({ method: 'POST', url: '/api/webhooks', headers: asRole(org, 'admin'), payload: { url: `${receiver.url}/hooks`, ...body } });
  assert.equal(res.statusCode, 200, res.body);
  receiver.secrets.push(res.json().data.secret);
  return res.json().data as { webhook_id: string; secret: string };
}

async function listEvents(org: TestOrg, query = '') {
  const { app } = await testEnv();
  const res = await app.inject({ url: `/api/events?limit=100${query}`, headers: asRole(org, 'agent_manager') });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data as Array<{ id: string; type: string; data: any; organization_id: string; created_at: string }>;
}

const someEvent = async (org: TestOrg) => {
  await createAgent(org);
  return (await listEvents(org))[0]!.id;
};

runAuthMatrix({ method: 'GET', route: '/api/events', path: () => '/api/events', permission: 'events:read' });
runAuthMatrix({ method: 'GET', route: '/api/events/{event_id}', permission: 'events:read', foreignStatus: 404, path: async (org) => `/api/events/${await someEvent(org)}` });
runAuthMatrix({ method: 'GET', route: '/api/billing/settings', path: () => '/api/billing/settings', permission: 'billing:settings' });
runAuthMatrix({ method: 'PATCH', route: '/api/billing/settings', path: () => '/api/billing/settings', body: () => ({ low_balance_threshold: 50 }), permission: 'billing:settings' });

describe('events: emitted by the real operations, delivered signed', () => {
  let receiver: Receiver;
  before(async () => {
    receiver = await startReceiver();
  });
  after(() => receiver.close());

  test('every event type reaches a receiver that verifies it with standardwebhooks, once, and GET /api/events lists it', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    await registerWebhook(org, receiver);
    const admin = asRole(org, 'admin');

    // agents
    const agent = await createAgent(org, { agent_name: 'Events agent', recording_enabled: true });
    assert.equal((await app.inject({ method: 'PATCH', url: `/api/agents/${agent.agent_id}`, headers: admin, payload: { agent_name: 'Renamed' } })).statusCode, 200);
    const spare = await createAgent(org, { agent_name: 'Spare' });
    assert.equal((await app.inject({ method: 'DELETE', url: `/api/agents/${spare.agent_id}`, headers: admin })).statusCode, 200);
    // phone numbers
    const number = await app.inject({ method: 'POST', url: '/api/phone-numbers', headers: admin, payload: {
      phone_number: uniquePhoneNumber(), provider: 'sip', supports_inbound: true, sip_trunk_name: 'PBX', sip_username: 'u', sip_password: 'password-1', inbound_room_name: 'call-',
    } });
    assert.equal(number.statusCode, 200, number.body);
    const numberId = number.json().data.phone_number_id;
    assert.equal((await app.inject({ method: 'DELETE', url: `/api/phone-numbers/${numberId}`, headers: admin })).statusCode, 200);
    // API keys
    const key = await app.inject({ method: 'POST', url: '/api/api-keys', headers: admin, payload: { name: 'ci', role: 'user' } });
    const keyId = key.json().data.key_id;
    assert.equal((await app.inject({ method: 'DELETE', url: `/api/api-keys/${keyId}`, headers: admin })).statusCode, 200);
    // invitation accepted, member removed
    const email = uniqueEmail('invitee');
    const invite = await app.inject({ method: 'POST', url: '/api/auth/organizations/invitations', headers: admin, payload: { email, role: 'user' } });
    const token = await userToken({ sub: `sub-${email}`, email });
    const accepted = await app.inject({ method: 'POST', url: `/api/auth/invitations/${invite.json().data.invite_id}/accept`, headers: { authorization: `Bearer ${token}` } });
    assert.equal(accepted.statusCode, 200, accepted.body);
    const memberId = accepted.json().data.user_id;
    assert.equal((await app.inject({ method: 'DELETE', url: `/api/auth/organizations/members/${memberId}`, headers: admin })).statusCode, 200);
    // credits purchased (the local checkout's Pay), the threshold set, then a call that crosses it
    const checkout = await app.inject({ method: 'POST', url: '/api/billing/credits/purchase', headers: admin, payload: { amount: 5 } });
    const pay = await app.inject({ method: 'POST', url: `${checkout.json().checkout_url.replace(/^https?:\/\/[^/]+/, '')}/pay`, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: '' });
    assert.equal(pay.statusCode, 200, pay.body);
    const settings = await app.inject({ method: 'PATCH', url: '/api/billing/settings', headers: admin, payload: { low_balance_threshold: 450 } });
    assert.deepEqual(settings.json().data, { low_balance_threshold: 450 });
    // calls: created, a status change, ended (with a cost that takes the balance from 500 to 400 < 450)
    const call = await createCall(org, agent.agent_id, { status: 'queued' });
    assert.equal((await patchCall(org, call.call_sid, { status: 'ringing' })).statusCode, 200);
    const ended = await patchCall(org, call.call_sid, {
      status: 'completed', end_reason: 'user_hangup', total_cost: 100, transcript: [{ role: 'user', text: 'Hello', start_seconds: 0 }],
    });
    assert.equal(ended.statusCode, 200, ended.body);
    assert.equal((await patchCall(org, call.call_sid, { status: 'failed' })).statusCode, 409, 'a second final report changes nothing');
    const second = await createCall(org, agent.agent_id, { status: 'in_progress' });
    await patchCall(org, second.call_sid, { status: 'completed', total_cost: 10 }); // 400 → 390: still below, no second credits.low
    assert.equal((await uploadRecording(org, call.call_sid, toneWav(0.3, 440))).statusCode, 200);
    // documents: one indexed, one that fails
    const doc = await createTextDocument(org, 'Opening hours', 'We open at nine and close at five.');
    const broken = (await uploadFile(org, 'Broken', { name: 'broken.pdf', content: '%PDF-1.7\nnot really a pdf' })).json().data;
    assert.equal((await waitForProcessing(org, doc.documentation_id)).processing_status, 'completed');
    assert.equal((await waitForProcessing(org, broken.documentation_id)).processing_status, 'failed');

    const expected: Record<string, number> = {
      'agent.created': 2, 'agent.updated': 1, 'agent.deleted': 1, 'phone_number.imported': 1, 'phone_number.deleted': 1,
      'api_key.created': 1, 'api_key.revoked': 1, 'invitation.accepted': 1, 'member.removed': 1, 'credits.purchased': 1,
      'credits.low': 1, 'call.created': 2, 'call.updated': 1, 'call.ended': 2, 'recording.ready': 1, 'document.completed': 1, 'document.failed': 1,
    };
    const total = Object.values(expected).reduce((a, b) => a + b, 0);
    const mine = () => receiver.received.filter((r) => r.event?.organization_id === org.orgId);
    await receiver.waitFor(() => mine().length >= total);
    await new Promise((r) => setTimeout(r, 1500)); // nothing more arrives (no duplicate, no stray event)
    const counts: Record<string, number> = {};
    for (const r of mine()) counts[r.event.type] = (counts[r.event.type] ?? 0) + 1;
    assert.deepEqual(counts, expected);
    for (const r of mine()) {
      assert.equal(r.verifiedWith.length, 1, 'signed with the endpoint secret');
      assert.equal(r.headers['webhook-id'], r.event.id);
      assert.equal(r.headers['content-type'], 'application/json');
      assert.match(String(r.headers['webhook-signature']), /^v1,[A-Za-z0-9+/=]+$/);
      assert.ok(Math.abs(Number(r.headers['webhook-timestamp']) - Date.now() / 1000) < 60);
    }

    const byType = (type: string) => mine().filter((r) => r.event.type === type).map((r) => r.event);
    const endedEvent = byType('call.ended')[0].data.call_sid === call.call_sid ? byType('call.ended')[0] : byType('call.ended')[1];
    assert.equal(endedEvent.data.status, 'completed');
    assert.equal(endedEvent.data.billing_status, 'billed');
    assert.deepEqual(endedEvent.data.transcript, [{ role: 'user', text: 'Hello', start_seconds: 0 }]);
    assert.deepEqual(byType('credits.low')[0].data, { balance: 400, threshold: 450 });
    assert.equal(byType('credits.purchased')[0].data.amount, 500);
    assert.equal(byType('credits.purchased')[0].data.balance, 500);
    assert.deepEqual(byType('recording.ready')[0].data, { call_sid: call.call_sid, content_type: 'audio/wav', bytes: toneWav(0.3, 440).length });
    assert.deepEqual(byType('agent.deleted')[0].data, { agent_id: spare.agent_id });
    assert.deepEqual(byType('member.removed')[0].data, { user_id: memberId });
    assert.equal(byType('invitation.accepted')[0].data.status, 'accepted');
    assert.equal(byType('api_key.created')[0].data.key_id, keyId);
    assert.equal(byType('api_key.created')[0].data.key, undefined, 'never the secret');
    assert.equal(byType('phone_number.imported')[0].data.phone_number_id, numberId);
    assert.equal(byType('document.failed')[0].data.documentation_id, broken.documentation_id);
    assert.equal(byType('call.updated')[0].data.status, 'ringing');

    // The API lists the same events, newest first, and filters by type.
    const listed = await listEvents(org);
    assert.equal(listed.length, total);
    assert.deepEqual(new Set(listed.map((e) => e.id)), new Set(mine().map((r) => r.event.id)));
    const times = listed.map((e) => e.created_at);
    assert.deepEqual(times, [...times].sort().reverse());
    const calls = await listEvents(org, '&type=call.created&type=call.ended');
    assert.deepEqual(calls.map((e) => e.type).sort(), ['call.created', 'call.created', 'call.ended', 'call.ended']);
    const one = await app.inject({ url: `/api/events/${endedEvent.id}`, headers: asRole(org, 'admin') });
    assert.deepEqual(one.json().data, endedEvent, 'the delivered body is the event as the API shows it');
  });

  test('a change that rolls back emits nothing: a refused final report, a taken call_sid, an agent that cannot be deleted', async () => {
    const { app, database } = await testEnv();
    const org = await createOrg();
    const agent = await createAgent(org);
    const before = (await listEvents(org)).length;
    const call = await createCall(org, agent.agent_id, { call_sid: 'call_rollback01' });
    assert.equal((await app.inject({ method: 'POST', url: '/api/calls', headers: asRole(org, 'admin'), payload: {
      agent_id: agent.agent_id, call_type: 'inbound', to_number: '+14155550100', call_sid: 'call_rollback01',
    } })).statusCode, 409);
    // end_time before start_time: the final report is refused after the row was locked and changes computed
    const refused = await patchCall(org, call.call_sid, { status: 'completed', start_time: '2030-01-01T00:00:10.000Z', end_time: '2030-01-01T00:00:00.000Z' });
    assert.equal(refused.statusCode, 400);
    // an agent with a number: its delete is refused inside the transaction
    const number = await app.inject({ method: 'POST', url: '/api/phone-numbers', headers: asRole(org, 'admin'), payload: {
      phone_number: uniquePhoneNumber(), provider: 'sip', supports_inbound: true, sip_trunk_name: 'PBX', sip_username: 'u', sip_password: 'password-1', inbound_room_name: 'call-',
    } });
    await app.inject({ method: 'PATCH', url: `/api/phone-numbers/${number.json().data.phone_number_id}`, headers: asRole(org, 'admin'), payload: { agent_id: agent.agent_id } });
    assert.equal((await app.inject({ method: 'DELETE', url: `/api/agents/${agent.agent_id}`, headers: asRole(org, 'admin') })).statusCode, 409);
    const types = (await listEvents(org)).map((e) => e.type).sort();
    assert.equal(before, 1);
    assert.deepEqual(types, ['agent.created', 'call.created', 'phone_number.imported']);
  });

  test('a transaction that emits and then rolls back leaves no event and no delivery', async () => {
    const { database, services } = await testEnv();
    const org = await createOrg();
    await registerWebhook(org, receiver);
    const agent = await createAgent(org);
    let emitted: { eventId: string } | undefined;
    await assert.rejects(transaction(database.db, async (tx) => {
      emitted = await services.outbox.emit(tx, org.orgId, 'agent.updated', { agent_id: agent.agent_id });
      assert.equal(tx.unit.pending, 2, 'the event and its deliveries wait for the commit');
      throw new Error('the change fails after its event was written');
    }), /fails after/);
    assert.match(emitted!.eventId, /^evt_/, 'the event was emitted before the change failed');
    const count = async (sql: string) => (await database.pool.query(sql, [org.orgId])).rows[0].n;
    assert.equal(await count("SELECT count(*)::int AS n FROM events WHERE client_id = $1 AND type = 'agent.updated'"), 0);
    assert.equal(await count('SELECT count(*)::int AS n FROM webhook_deliveries WHERE client_id = $1'), 1, 'only agent.created was delivered');
  });

  test('credits.low once per downward crossing; GET /api/billing/settings defaults to 100', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    assert.deepEqual((await app.inject({ url: '/api/billing/settings', headers: asRole(org, 'admin') })).json().data, { low_balance_threshold: 100 });
    const bad = await app.inject({ method: 'PATCH', url: '/api/billing/settings', headers: asRole(org, 'admin'), payload: { low_balance_threshold: -1 } });
    assert.equal(bad.statusCode, 400);
    const agent = await createAgent(org);
    await grantCredits(org.orgId, 130);
    const end = async (cost: number) => {
      const c = await createCall(org, agent.agent_id, { status: 'in_progress' });
      assert.equal((await patchCall(org, c.call_sid, { status: 'completed', total_cost: cost })).statusCode, 200);
    };
    await end(20); // 110: above
    await end(20); // 90: crosses
    await end(20); // 70: still below
    await grantCredits(org.orgId, 100); // 170: back above
    await end(80); // 90: crosses again
    const lows = (await listEvents(org, '&type=credits.low')).map((e) => e.data).reverse();
    assert.deepEqual(lows, [{ balance: 90, threshold: 100 }, { balance: 90, threshold: 100 }]);
  });

  test("events: unknown or another organization's id → 404; a bad type or cursor → 400; pages are keyset", async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const other = await createOrg();
    for (let i = 0; i < 3; i++) await createAgent(other, { agent_name: `A${i}` });
    const foreign = (await listEvents(other))[0]!.id;
    assert.equal((await app.inject({ url: `/api/events/${foreign}`, headers: asRole(org, 'admin') })).statusCode, 404);
    assert.equal((await app.inject({ url: '/api/events/evt_nope', headers: asRole(org, 'admin') })).json().code, 'not_found');
    assert.equal((await listEvents(org)).length, 0, "another organization's events are not listed");
    const badType = await app.inject({ url: '/api/events?type=call.exploded', headers: asRole(org, 'admin') });
    assert.equal(badType.statusCode, 400);
    assert.equal((await app.inject({ url: '/api/events?cursor=!!', headers: asRole(org, 'admin') })).statusCode, 400);
    const page1 = (await app.inject({ url: '/api/events?limit=2', headers: asRole(other, 'admin') })).json();
    assert.equal(page1.data.length, 2);
    assert.equal(page1.pagination.has_more, true);
    const page2 = (await app.inject({ url: `/api/events?limit=2&cursor=${page1.pagination.next_cursor}`, headers: asRole(other, 'admin') })).json();
    assert.equal(page2.data.length, 1);
    assert.equal(page2.pagination.has_more, false);
  });

  test('the retention job deletes events older than 30 days (with their deliveries) and keeps the rest', async () => {
    const { database, services } = await testEnv();
    const org = await createOrg();
    await createAgent(org);
    await createAgent(org);
    const [kept, aged] = await listEvents(org);
    await database.pool.query("UPDATE events SET created_at = now() - interval '31 days' WHERE id = $1", [aged!.id]);
    await services.events.cleanup();
    const left = (await listEvents(org)).map((e) => e.id);
    assert.deepEqual(left, [kept!.id]);
  });
});
