import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { runAuthMatrix } from './helpers/auth-matrix.ts';
import { testEnv } from './helpers/env.ts';
import { asRole, createAgent, createOrg, type TestOrg, uniquePhoneNumber } from './helpers/fixtures.ts';

export const sipBody = (overrides: Record<string, unknown> = {}) => ({
  phone_number: uniquePhoneNumber(), provider: 'sip', supports_inbound: true,
  sip_trunk_name: 'Office PBX', sip_username: 'pbx-user', sip_password: 'pbx-password-1', inbound_room_name: 'call-',
  ...overrides,
});

async function importNumber(org: TestOrg, body: Record<string, unknown> = sipBody()) {
  const { app } = await testEnv();
  const res = await app.inject({ method: 'POST', url: '/api/phone-numbers', headers: asRole(org, 'agent_manager'), payload: body });
  assert.equal(res.statusCode, 200, res.body);
  return res.json();
}


const numberPath = async (org: TestOrg) => `/api/phone-numbers/${(await importNumber(org)).data.phone_number_id}`;
runAuthMatrix({ method: 'POST', route: '/api/phone-numbers', path: () => '/api/phone-numbers', body: () => sipBody(), permission: 'phone_numbers:create' });
runAuthMatrix({ method: 'GET', route: '/api/phone-numbers', path: () => '/api/phone-numbers', permission: 'phone_numbers:read' });
runAuthMatrix({ method: 'GET', route: '/api/phone-numbers/{phone_number_id}', path: numberPath, permission: 'phone_numbers:read', foreignStatus: 404 });
runAuthMatrix({ method: 'PATCH', route: '/api/phone-numbers/{phone_number_id}', path: numberPath, body: () => ({ supports_outbound: true }), permission: 'phone_numbers:update', foreignStatus: 404 });
runAuthMatrix({ method: 'DELETE', route: '/api/phone-numbers/{phone_number_id}', path: numberPath, permission: 'phone_numbers:delete', foreignStatus: 403 });

describe('phone numbers: import rules (section 4.6 and 7)', () => {
  const cases: Array<[string, Record<string, unknown>, string[]]> = [
    ['not E.164', sipBody({ phone_number: '0044 20 1234' }), ['body.phone_number']],
    ['invalid provider', sipBody({ provider: 'carrier_z' }), ['body.provider']],
    ['carrier_a without integration_id', { phone_number: uniquePhoneNumber(), provider: 'carrier_a' }, ['body.integration_id']],
    ['carrier_a with SIP fields', { phone_number: uniquePhoneNumber(), provider: 'carrier_a', integration_id: 'intg_000000000000', sip_username: 'x' }, ['body.sip_username']],
    ['sip without its fields', { phone_number: uniquePhoneNumber(), provider: 'sip' }, ['body.sip_trunk_name', 'body.sip_username', 'body.sip_password', 'body.inbound_room_name']],
    ['sip outbound without a server address', sipBody({ supports_outbound: true }), ['body.sip_server_address']],
    ['sip with an integration', sipBody({ integration_id: 'intg_000000000000' }), ['body.integration_id']],
    ['PIN of 3 characters', sipBody({ inbound_pin: '123' }), ['body.inbound_pin']],
    ['PIN of 11 characters', sipBody({ inbound_pin: '12345678901' }), ['body.inbound_pin']],
    ['unknown media_encryption', sipBody({ media_encryption: 'sometimes' }), ['body.media_encryption']],
    ['missing phone_number', { provider: 'sip' }, ['body.phone_number']],
    ['unknown field', sipBody({ colour: 'blue' }), ['body.colour']],
  ];
  for (const [name, body, paths] of cases) {
    test(`${name} → 400`, async () => {
      const { app } = await testEnv();
      const org = await createOrg();
      const res = await app.inject({ method: 'POST', url: '/api/phone-numbers', headers: asRole(org, 'admin'), payload: body });
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(res.json().code, 'validation_error');
      const got = res.json().errors.map((e: { path: string }) => e.path);
      for (const p of paths) assert.ok(got.includes(p), `${p} in ${JSON.stringify(got)}`);
    });
  }

  test('carrier_a with an unknown integration → 404', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const res = await app.inject({
      method: 'POST', url: '/api/phone-numbers', headers: asRole(org, 'admin'),
      payload: { phone_number: uniquePhoneNumber(), provider: 'carrier_a', integration_id: 'intg_0123456789ab' },
    });
    assert.equal(res.statusCode, 404, res.body);
    assert.equal(res.json().code, 'not_found');
  });
});

describe('phone numbers: SIP on the local backend', () => {
  const PIN = '8642097531';
  test('import creates inbound trunk, outbound trunk and dispatch rule; secrets are sealed and never returned', async () => {
    const { app, database } = await testEnv();
    const org = await createOrg();
    const body = sipBody({ supports_outbound: true, sip_server_address: 'sip.example.net', inbound_pin: PIN, media_encryption: 'require' });
    const created = await importNumber(org, body);
    assert.match(created.message, /SIP/);
    const number = created.data;
    assert.match(number.phone_number_id, /^phon_[a-f0-9]{12}$/);
    assert.equal(number.status, 'free');
    assert.equal(number.provider, 'sip');
    assert.equal(number.integration_id, null);
    assert.equal(number.supports_inbound, true);
    assert.equal(number.supports_outbound, true);
    assert.equal(number.sip.media_encryption, 'require');
    assert.equal(number.sip.has_inbound_pin, true);
    assert.match(number.sip.inbound_trunk_id, /^ST_/);
    assert.match(number.sip.outbound_trunk_id, /^ST_/);
    assert.match(number.sip.dispatch_rule_id, /^SDR_/);
    const got = await app.inject({ url: `/api/phone-numbers/${number.phone_number_id}`, headers: asRole(org, 'user') });
    // The random phone number may contain the PIN's digits by chance: look for the secrets everywhere but in it.
    for (const text of [JSON.stringify(created), got.body].map((t) => t.replaceAll(body.phone_number, ''))) {
      assert.ok(!text.includes('pbx-password-1') && !text.includes(PIN), text);
    }

    const { rows } = await database.pool.query('SELECT id, kind, spec FROM sip_resources WHERE client_id = $1 ORDER BY kind', [org.orgId]);
    assert.deepEqual(rows.map((r) => r.kind), ['dispatch_rule', 'inbound_trunk', 'outbound_trunk']);
    assert.deepEqual(rows.find((r) => r.kind === 'inbound_trunk').spec.numbers, [body.phone_number]);
    assert.equal(rows.find((r) => r.kind === 'outbound_trunk').spec.address, 'sip.example.net');
    assert.deepEqual(rows.find((r) => r.kind === 'dispatch_rule').spec.trunk_ids, [number.sip.inbound_trunk_id]);
    const [stored] = (await database.pool.query('SELECT sip_password_encrypted, inbound_pin_encrypted FROM phone_numbers WHERE id = $1', [number.phone_number_id])).rows;
    assert.match(stored.sip_password_encrypted, /^v1\./);
    assert.match(stored.inbound_pin_encrypted, /^v1\./);

    const deleted = await app.inject({ method: 'DELETE', url: `/api/phone-numbers/${number.phone_number_id}`, headers: asRole(org, 'admin') });
    assert.equal(deleted.statusCode, 200, deleted.body);
    assert.equal(deleted.json().data.status, 'free');
    assert.deepEqual(Object.keys(deleted.json().data).filter((k) => ['phone_number_id', 'phone_number', 'provider', 'status', 'created_at', 'updated_at'].includes(k)).length, 6);
    assert.equal((await database.pool.query('SELECT 1 FROM sip_resources WHERE client_id = $1', [org.orgId])).rowCount, 0);
    assert.equal((await app.inject({ url: `/api/phone-numbers/${number.phone_number_id}`, headers: asRole(org, 'user') })).statusCode, 404);
  });

  test('the same number twice → 409, from any organization, also when imported concurrently, with no orphan trunk', async () => {
    const { app, database } = await testEnv();
    const [org, other] = [await createOrg(), await createOrg()];
    const body = sipBody();
    await importNumber(org, body);
    for (const who of [org, other]) {
      const again = await app.inject({ method: 'POST', url: '/api/phone-numbers', headers: asRole(who, 'admin'), payload: body });
      assert.equal(again.statusCode, 409, again.body);
      assert.equal(again.json().code, 'phone_number_exists');
    }
    const race = sipBody();
    const results = await Promise.all(Array.from({ length: 6 }, () =>
      app.inject({ method: 'POST', url: '/api/phone-numbers', headers: asRole(other, 'admin'), payload: race })));
    assert.deepEqual(results.map((r) => r.statusCode).sort(), [200, 409, 409, 409, 409, 409]);
    const { rows } = await database.pool.query(
      "SELECT count(*)::int AS n FROM sip_resources WHERE client_id = $1 AND kind = 'inbound_trunk' AND spec->'numbers' ? $2", [other.orgId, race.phone_number]);
    assert.equal(rows[0].n, 1);
  });

  test('assign to an agent, refuse both deletes while assigned, unassign, then delete', async () => {
    const { app } = await testEnv();
    const [org, other] = [await createOrg(), await createOrg()];
    const agentId = (await createAgent(org)).agent_id;
    const number = (await importNumber(org)).data;
    const path = `/api/phone-numbers/${number.phone_number_id}`;
    const patch = (payload: Record<string, unknown>) => app.inject({ method: 'PATCH', url: path, headers: asRole(org, 'agent_manager'), payload });

    assert.equal((await patch({ agent_id: 'agent_000000000000' })).statusCode, 404);
    assert.equal((await patch({ agent_id: (await createAgent(other)).agent_id })).statusCode, 404, "another organization's agent");
    assert.equal((await patch({})).statusCode, 400);
    const assigned = await patch({ agent_id: agentId, supports_outbound: true });
    assert.equal(assigned.statusCode, 200, assigned.body);
    assert.equal(assigned.json().data.status, 'assigned');
    assert.equal(assigned.json().data.agent_id, agentId);
    assert.equal(assigned.json().data.supports_outbound, true);
    const agent = (await app.inject({ url: `/api/agents/${agentId}`, headers: asRole(org, 'user') })).json().data;
    assert.deepEqual(agent.phone_number_ids, [number.phone_number_id]);

    const agentDelete = await app.inject({ method: 'DELETE', url: `/api/agents/${agentId}`, headers: asRole(org, 'admin') });
    assert.equal(agentDelete.statusCode, 409);
    assert.equal(agentDelete.json().code, 'agent_has_phone_numbers');
    const numberDelete = await app.inject({ method: 'DELETE', url: path, headers: asRole(org, 'admin') });
    assert.equal(numberDelete.statusCode, 409);
    assert.equal(numberDelete.json().code, 'phone_number_assigned');

    const unassigned = await patch({ agent_id: null });
    assert.equal(unassigned.json().data.status, 'free');
    assert.equal(unassigned.json().data.agent_id, null);
    assert.equal((await app.inject({ method: 'DELETE', url: path, headers: asRole(org, 'admin') })).statusCode, 200);
    assert.equal((await app.inject({ method: 'DELETE', url: `/api/agents/${agentId}`, headers: asRole(org, 'admin') })).statusCode, 200);
  });

  test('delete: unknown → 404, another organization → 403 and the number stays', async () => {
    const { app } = await testEnv();
    const [org, other] = [await createOrg(), await createOrg()];
    const unknown = await app.inject({ method: 'DELETE', url: '/api/phone-numbers/phon_0123456789ab', headers: asRole(org, 'admin') });
    assert.equal(unknown.statusCode, 404);
    const theirs = (await importNumber(other)).data;
    const refused = await app.inject({ method: 'DELETE', url: `/api/phone-numbers/${theirs.phone_number_id}`, headers: asRole(org, 'admin') });
    assert.equal(refused.statusCode, 403);
    assert.equal(refused.json().code, 'forbidden');
    assert.equal((await app.inject({ url: `/api/phone-numbers/${theirs.phone_number_id}`, headers: asRole(other, 'user') })).statusCode, 200);
  });

  test('list pages newest first with a cursor and total_count, and only shows the organization', async () => {
    const { app } = await testEnv();
    const [org, other] = [await createOrg(), await createOrg()];
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.unshift((await importNumber(org)).data.phone_number_id);
    await importNumber(other);
    const first = (await app.inject({ url: '/api/phone-numbers?page_size=2', headers: asRole(org, 'user') })).json();
    assert.deepEqual(first.data.map((n: any) => n.phone_number_id), ids.slice(0, 2));
    assert.equal(first.pagination.total_count, 3);
    assert.equal(first.pagination.has_more, true);
    const second = (await app.inject({ url: `/api/phone-numbers?page_size=2&cursor=${first.pagination.next_cursor}`, headers: asRole(org, 'user') })).json();
    assert.deepEqual(second.data.map((n: any) => n.phone_number_id), ids.slice(2));
    assert.equal(second.pagination.next_cursor, null);
  });
});
