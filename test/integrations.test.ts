import type { FastifyInstance } from 'fastify';
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { phoneNumbers } from '../src/db/schema/index.ts';
import { runAuthMatrix } from './helpers/auth-matrix.ts';
import { startCarrierStandIn, type CarrierStandIn } from './helpers/carrier-standin.ts';
import { TEST_ENCRYPTION_KEY, TEST_JWT_SECRET, testConfig, testEnv, buildTestApp } from './helpers/env.ts';
import { asRole, createOrg, type TestOrg } from './helpers/fixtures.ts';

const creds = { account_sid: 'AC00000000000000000000000000000000', auth_token: 'super-secret-token' };
async function createIntegration(org: TestOrg, credentials = creds, app?: FastifyInstance) {
  const target = app ?? (await testEnv()).app;
  const res = await target.inject({
    method: 'POST', url: '/api/integrations', headers: asRole(org, 'admin'),
    payload: { name: 'Main carrier', provider: 'carrier_a', category: 'telephony', credentials },
  });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data;
}

const intgPath = async (org: TestOrg) => `/api/integrations/${(await createIntegration(org)).integration_id}`;
runAuthMatrix({ method: 'POST', route: '/api/integrations', path: () => '/api/integrations', body: () => ({ name: 'x', provider: 'carrier_a', credentials: creds }), permission: 'integrations:create' });
runAuthMatrix({ method: 'GET', route: '/api/integrations', path: () => '/api/integrations', permission: 'integrations:read' });
runAuthMatrix({ method: 'GET', route: '/api/integrations/{integration_id}', path: intgPath, permission: 'integrations:read', foreignStatus: 404 });
runAuthMatrix({ method: 'PATCH', route: '/api/integrations/{integration_id}', path: intgPath, body: () => ({ name: 'y' }), permission: 'integrations:update', foreignStatus: 404 });
runAuthMatrix({ method: 'DELETE', route: '/api/integrations/{integration_id}', path: intgPath, permission: 'integrations:delete', foreignStatus: 404 });

describe('integrations', () => {
  test('credentials are encrypted at rest and never returned', async () => {
    const { app, database } = await testEnv();
    const org = await createOrg();
    const created = await createIntegration(org);
    assert.match(created.integration_id, /^intg_[a-f0-9]{12}$/);
    assert.equal(created.status, 'active');
    assert.equal(created.category, 'telephony');
    assert.equal(created.client_id, org.orgId);
    const responses = [
      JSON.stringify(created),
      (await app.inject({ url: '/api/integrations', headers: asRole(org, 'user') })).body,
      (await app.inject({ url: `/api/integrations/${created.integration_id}`, headers: asRole(org, 'user') })).body,
    ];
    for (const body of responses) {
      assert.ok(!body.includes(creds.auth_token) && !body.includes('credentials'), body);
    }
    const { rows } = await database.pool.query('SELECT * FROM integrations WHERE id = $1', [created.integration_id]);
    assert.ok(!JSON.stringify(rows[0]).includes(creds.auth_token));
    assert.match(rows[0].credentials_encrypted, /^v1\./);
    const list = (await app.inject({ url: '/api/integrations', headers: asRole(org, 'user') })).json();
    assert.equal(list.pagination.total_count, 1);
    assert.deepEqual(Object.keys(list.data[0]).sort(), ['category', 'created_at', 'integration_id', 'name', 'provider', 'status']);
  });

  test('provider and category are checked; delete is refused while phone numbers use the integration', async () => {
    const { app, database } = await testEnv();
    const org = await createOrg();
    const bad = await app.inject({
      method: 'POST', url: '/api/integrations', headers: asRole(org, 'admin'),
      payload: { name: 'x', provider: 'carrier_z', category: 'email', credentials: { account_sid: 'a' } },
    });
    assert.equal(bad.statusCode, 400);
    const paths = bad.json().errors.map((e: any) => e.path);
    for (const p of ['body.provider', 'body.category', 'body.credentials.auth_token']) assert.ok(paths.includes(p), p);

    const used = await createIntegration(org);
    await database.db.insert(phoneNumbers).values({
      id: 'phon_0a0b0c0d0e0f', clientId: org.orgId, phoneNumber: `+1555${Date.now().toString().slice(-7)}`, provider: 'carrier_a', integrationId: used.integration_id,
    });
    const refused = await app.inject({ method: 'DELETE', url: `/api/integrations/${used.integration_id}`, headers: asRole(org, 'admin') });
    assert.equal(refused.statusCode, 409);
    assert.equal(refused.json().code, 'integration_in_use');
    await database.pool.query('DELETE FROM phone_numbers WHERE id = $1', ['phon_0a0b0c0d0e0f']);
    const deleted = await app.inject({ method: 'DELETE', url: `/api/integrations/${used.integration_id}`, headers: asRole(org, 'admin') });
    assert.equal(deleted.statusCode, 200);
  });
});

describe('integration validation against the carrier stand-in', () => {
  let carrier: CarrierStandIn;
  let app: FastifyInstance;
  before(async () => {
    carrier = await startCarrierStandIn();
    const { database, tmpDir } = await testEnv();
    app = await buildTestApp(testConfig(tmpDir, { CARRIER_A_API_URL: carrier.url, CARRIER_A_TIMEOUT_MS: '300' }));
  });
  after(async () => {
    await app?.close();
    await carrier?.close();
  });

  const validate = (org: TestOrg, id: string, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
    app.inject({ method: 'POST', url: `/api/integrations/${id}/validate`, headers: asRole(org, 'user', headers) });

  runAuthMatrix({
    method: 'POST', route: '/api/integrations/{integration_id}/validate', permission: 'integrations:validate', foreignStatus: 404, headers: { 'content-type': 'application/json' },
    path: async (org) => `/api/integrations/${(await createIntegration(org)).integration_id}/validate`,
  });

  test('good credentials → active; bad → invalid; updated_at changes; the message says which', async () => {
    const org = await createOrg();
    const good = await createIntegration(org, { account_sid: carrier.account.sid, auth_token: carrier.account.token }, app);
    await new Promise((r) => setTimeout(r, 5));
    const ok = await validate(org, good.integration_id);
    assert.equal(ok.statusCode, 200, ok.body);
    assert.equal(ok.json().data.status, 'active');
    assert.match(ok.json().message, /active/);
    assert.ok(ok.json().data.updated_at > good.created_at);
    assert.equal(ok.json().data.client_id, org.orgId);
    const call = carrier.requests.at(-1)!;
    assert.equal(call.url, `/2010-04-01/Accounts/${carrier.account.sid}.json`);
    assert.equal(call.authorization, `Basic ${Buffer.from(`${carrier.account.sid}:${carrier.account.token}`).toString('base64')}`);

    const patched = await app.inject({
      method: 'PATCH', url: `/api/integrations/${good.integration_id}`, headers: asRole(org, 'admin'),
      payload: { credentials: { account_sid: carrier.account.sid, auth_token: 'wrong' } },
    });
    assert.equal(patched.statusCode, 200);
    const bad = await validate(org, good.integration_id);
    assert.equal(bad.json().data.status, 'invalid');
    assert.match(bad.json().message, /invalid/);
    const listed = (await app.inject({ url: '/api/integrations', headers: asRole(org, 'user') })).json();
    assert.equal(listed.data[0].status, 'invalid');
  });

  test('a provider that does not answer → invalid with a message, no hang; no JSON content type → 415', async () => {
    const org = await createOrg();
    const hanging = await createIntegration(org, { account_sid: 'AChang0000', auth_token: 'x' }, app);
    const started = Date.now();
    const res = await validate(org, hanging.integration_id);
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().data.status, 'invalid');
    assert.match(res.json().message, /did not answer/);
    assert.ok(Date.now() - started < 3000);
    const noType = await validate(org, hanging.integration_id, {});
    assert.equal(noType.statusCode, 415);
    assert.equal(noType.json().code, 'unsupported_media_type');
  });
});
