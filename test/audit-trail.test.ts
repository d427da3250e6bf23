import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { toneWav } from '../src/modules/calls/recordings/audio.ts';
import { newId } from '../src/core/ids.ts';
import { OrganizationRepository } from '../src/modules/organizations/repository.ts';
import { testEnv } from './helpers/env.ts';
import { asRole, createAgent, createOrg, uniqueEmail, userToken, type TestOrg } from './helpers/fixtures.ts';
import { createCall, patchCall, uploadRecording } from './helpers/calls.ts';
import { addContacts, createCampaign, createOutboundNumber } from './helpers/campaigns.ts';

/**
 * Extensions.md §6: every change made through the API has one audit entry, written with the change.
 * Each resource's trail is read back through GET /api/audit-logs, oldest first, as
 * [action, resource_id, changed_fields]; the auth matrix checks the same for every route it calls.
 */
async function send(org: TestOrg, method: 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown, role: 'admin' | 'agent_manager' = 'admin') {
  const { app } = await testEnv();
  const res = await app.inject({ method, url, headers: asRole(org, role), ...(payload === undefined ? {} : { payload: payload as object }) });
  assert.ok(res.statusCode < 300, `${method} ${url}: ${res.statusCode} ${res.body}`);
  return res.json();
}

async function trail(org: TestOrg, resourceType: string): Promise<Array<[string, string, string[]]>> {
  const { app } = await testEnv();
  const res = await app.inject({ method: 'GET', url: `/api/audit-logs?resource_type=${resourceType}&page_size=100`, headers: asRole(org, 'admin') });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data.map((e: any) => [e.action, e.resource_id, e.changed_fields]).reverse();
}

/** No value the caller sent as a secret may be anywhere in the organization's log. */
async function assertNeverLogged(org: TestOrg, secret: string) {
  const { database } = await testEnv();
  const { rows } = await database.pool.query('SELECT count(*)::int AS n FROM audit_logs WHERE client_id = $1 AND row_to_json(audit_logs)::text LIKE $2', [org.orgId, `%${secret}%`]);
  assert.equal(rows[0].n, 0, `${secret} reached the audit log`);
}

describe('audit trail of every resource', () => {
  test('agents, phone numbers and API keys', async () => {
    const org = await createOrg();
    const agent = (await send(org, 'POST', '/api/agents', { agent_name: 'Front desk' })).data;
    await send(org, 'PATCH', `/api/agents/${agent.agent_id}`, { first_message: 'Hello' });
    await send(org, 'DELETE', `/api/agents/${agent.agent_id}`);
    const [created] = await trail(org, 'agent');
    assert.equal(created![0], 'agent.create');
    assert.ok(created![2].includes('agent_name'));
    assert.deepEqual((await trail(org, 'agent')).slice(1), [['agent.update', agent.agent_id, ['first_message']], ['agent.delete', agent.agent_id, []]]);

    const number = await createOutboundNumber(org);
    const assignee = await createAgent(org);
    await send(org, 'PATCH', `/api/phone-numbers/${number.phone_number_id}`, { agent_id: assignee.agent_id });
    await send(org, 'PATCH', `/api/phone-numbers/${number.phone_number_id}`, { agent_id: null });
    await send(org, 'DELETE', `/api/phone-numbers/${number.phone_number_id}`);
    const numbers = await trail(org, 'phone_number');
    assert.deepEqual(numbers.map(([action, id]) => [action, id]), [
      ['phone_number.import', number.phone_number_id], ['phone_number.update', number.phone_number_id],
      ['phone_number.update', number.phone_number_id], ['phone_number.delete', number.phone_number_id],
    ]);
    assert.ok(numbers[0]![2].includes('sip_password'), 'the field is named');
    await assertNeverLogged(org, 'secret-password');

    const key = (await send(org, 'POST', '/api/api-keys', { name: 'ci', role: 'user' })).data;
    await send(org, 'DELETE', `/api/api-keys/${key.key_id}`);
    await send(org, 'DELETE', `/api/api-keys/${key.key_id}`); // revoking again changes nothing
    assert.deepEqual(await trail(org, 'api_key'), [['api_key.create', key.key_id, ['name', 'role']], ['api_key.revoke', key.key_id, ['status']]]);
    await assertNeverLogged(org, key.key);
  });

  test('webhooks, billing settings and checkouts', async () => {
    const org = await createOrg();
    const hook = (await send(org, 'POST', '/api/webhooks', { url: 'http://127.0.0.2:9/hooks', event_types: ['call.ended'] })).data;
    await send(org, 'PATCH', `/api/webhooks/${hook.webhook_id}`, { enabled: false });
    const rotated = (await send(org, 'POST', `/api/webhooks/${hook.webhook_id}/rotate-secret`)).data;
    await send(org, 'DELETE', `/api/webhooks/${hook.webhook_id}`);
    assert.deepEqual(await trail(org, 'webhook'), [
      ['webhook.create', hook.webhook_id, ['url', 'event_types', 'secret']], ['webhook.update', hook.webhook_id, ['enabled']],
      ['webhook.rotate_secret', hook.webhook_id, ['secret']], ['webhook.delete', hook.webhook_id, []],
    ]);
    await assertNeverLogged(org, hook.secret.slice(6));
    await assertNeverLogged(org, rotated.secret.slice(6));

    await send(org, 'PATCH', '/api/billing/settings', { low_balance_threshold: 25 });
    assert.deepEqual(await trail(org, 'billing_settings'), [['billing_settings.update', org.orgId, ['low_balance_threshold']]]);
    const checkout = await send(org, 'POST', '/api/billing/credits/purchase', { amount: 10 });
    const [purchase] = await trail(org, 'checkout_session');
    assert.equal(purchase![0], 'checkout.create');
    assert.ok(JSON.stringify(checkout).includes(purchase![1]), 'the entry names the checkout session it opened');
  });

  test('invitations and members, the invited person accepting included', async () => {
    const { app, database } = await testEnv();
    const org = await createOrg();
    const cancelled = (await send(org, 'POST', '/api/auth/organizations/invitations', { email: uniqueEmail('c'), role: 'user' })).data;
    await send(org, 'DELETE', `/api/auth/organizations/invitations/${cancelled.invite_id}`);
    const email = uniqueEmail('joiner');
    const accepted = (await send(org, 'POST', '/api/auth/organizations/invitations', { email, role: 'user' })).data;
    const token = await userToken({ sub: `sub-${email}`, email });
    const res = await app.inject({ method: 'POST', url: `/api/auth/invitations/${accepted.invite_id}/accept`, headers: { authorization: `Bearer ${token}` } });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(await trail(org, 'invitation'), [
      ['invitation.create', cancelled.invite_id, ['email', 'role']], ['invitation.cancel', cancelled.invite_id, ['status']],
      ['invitation.create', accepted.invite_id, ['email', 'role']], ['invitation.accept', accepted.invite_id, ['status']],
    ]);
    const repo = new OrganizationRepository(database.db);
    const member = await repo.insertUser({ id: newId('user'), subject: null, email: uniqueEmail('member') });
    await repo.insertMembership(org.orgId, member.id, 'user');
    await send(org, 'PATCH', `/api/auth/organizations/members/${member.id}`, { role: 'agent_manager' });
    await send(org, 'DELETE', `/api/auth/organizations/members/${member.id}`);
    assert.deepEqual(await trail(org, 'member'), [['member.update', member.id, ['role']], ['member.remove', member.id, []]]);
  });

  test('calls reported by the runtime, their recordings, and campaigns', async () => {
    const org = await createOrg();
    const agent = await createAgent(org, { recording_enabled: true });
    const call = await createCall(org, agent.agent_id);
    const started = await patchCall(org, call.call_sid, { status: 'in_progress' });
    assert.equal(started.statusCode, 200, started.body);
    const uploaded = await uploadRecording(org, call.call_sid, toneWav(0.2, 440));
    assert.equal(uploaded.statusCode, 200, uploaded.body);
    assert.deepEqual((await trail(org, 'call')).map(([action, id, fields]) => [action, id, fields]), [
      // The create also sets the status its schema defaults (queued).
      ['call.create', call.call_sid, ['agent_id', 'call_type', 'to_number', 'from_number', 'status']],
      ['call.update', call.call_sid, ['status']],
    ]);
    assert.deepEqual(await trail(org, 'recording'), [['recording.upload', call.call_sid, ['recording']]]);

    const campaign = await createCampaign(org);
    await addContacts(org, campaign.campaign_id, [{ phone_number: '+14155550142' }]);
    await send(org, 'PATCH', `/api/campaigns/${campaign.campaign_id}`, { name: 'Autumn reminders' }, 'agent_manager');
    await send(org, 'POST', `/api/campaigns/${campaign.campaign_id}/cancel`, undefined, 'agent_manager');
    assert.deepEqual((await trail(org, 'campaign')).map(([action, id]) => [action, id]), [
      ['campaign.create', campaign.campaign_id], ['campaign.contacts_add', campaign.campaign_id],
      ['campaign.update', campaign.campaign_id], ['campaign.cancel', campaign.campaign_id],
    ]);
  });
});
