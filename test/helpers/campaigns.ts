import assert from 'node:assert/strict';
import { testEnv } from './env.ts';
import { asRole, createAgent, uniquePhoneNumber, type TestOrg } from './fixtures.ts';

/** A SIP number of the organization that supports outbound calls (the local SIP backend: no provider). */
export async function createOutboundNumber(org: TestOrg, supportsOutbound = true): Promise<{ phone_number_id: string; phone_number: string }> {
  const { app } = await testEnv();
  const res = await app.inject({
    method: 'POST', url: '/api/phone-numbers', headers: asRole(org, 'admin'),
    payload: {
      phone_number: uniquePhoneNumber(), provider: 'sip', supports_outbound: supportsOutbound, sip_trunk_name: 'trunk', sip_username: 'u',
      sip_password: 'secret-password', inbound_room_name: 'room', ...(supportsOutbound ? { sip_server_address: 'sip.example.com' } : {}),
    },
  });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data;
}

export const WEEKDAYS_9_TO_17 = { timezone: 'Europe/Berlin', windows: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri'], start: '09:00', end: '17:00' }] };
export const ALWAYS = { timezone: 'UTC', windows: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], start: '00:00', end: '24:00' }] };

/** A campaign with a fresh agent and outbound number. */
export async function createCampaign(org: TestOrg, body: Record<string, unknown> = {}) {
  const { app } = await testEnv();
  const agent = await createAgent(org);
  const number = await createOutboundNumber(org);
  const res = await app.inject({
    method: 'POST', url: '/api/campaigns', headers: asRole(org, 'agent_manager'),
    payload: { name: 'Spring reminders', agent_id: agent.agent_id, from_phone_number_id: number.phone_number_id, schedule: ALWAYS, ...body },
  });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data;
}

export async function addContacts(org: TestOrg, campaignId: string, contacts: Array<{ phone_number: string; variables?: Record<string, string> }>) {
  const { app } = await testEnv();
  const res = await app.inject({ method: 'POST', url: `/api/campaigns/${campaignId}/contacts`, headers: asRole(org, 'agent_manager'), payload: { contacts } });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data;
}

/** A multipart body with one file field. */
export function csvForm(csv: string | Buffer, field = 'file') {
  const boundary = `----sb${Math.random().toString(16).slice(2)}`;
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="contacts.csv"\r\nContent-Type: text/csv\r\n\r\n`),
    Buffer.isBuffer(csv) ? csv : Buffer.from(csv),
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}

export async function campaignAction(org: TestOrg, campaignId: string, action: string) {
  const { app } = await testEnv();
  return app.inject({ method: 'POST', url: `/api/campaigns/${campaignId}/${action}`, headers: asRole(org, 'agent_manager') });
}

export async function getCampaign(org: TestOrg, campaignId: string) {
  const { app } = await testEnv();
  const res = await app.inject({ method: 'GET', url: `/api/campaigns/${campaignId}`, headers: asRole(org, 'user') });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data;
}

/** The progress counts add up to the total (extensions.md §3), and match a count of the contacts by status. */
export async function assertProgressTrue(org: TestOrg, campaignId: string) {
  const { database } = await testEnv();
  const { progress } = await getCampaign(org, campaignId);
  const { total, ...byStatus } = progress;
  assert.equal(Object.values(byStatus).reduce((a: number, b) => a + (b as number), 0), total, JSON.stringify(progress));
  const { rows } = await database.pool.query('SELECT status, count(*)::int AS n FROM campaign_contacts WHERE campaign_id = $1 GROUP BY status', [campaignId]);
  const counted = Object.fromEntries(rows.map((r) => [r.status, r.n]));
  for (const status of Object.keys(byStatus)) assert.equal(byStatus[status], counted[status] ?? 0, `${status}: ${JSON.stringify(progress)} vs ${JSON.stringify(counted)}`);
  return progress;
}
