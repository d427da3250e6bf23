import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { toneWav } from '../src/modules/calls/recordings/audio.ts';
import { RetentionSweeper } from '../src/modules/calls/retention/service.ts';
import { runAuthMatrix } from './helpers/auth-matrix.ts';
import { testEnv } from './helpers/env.ts';
import { asRole, createAgent, createOrg, uniqueEmail, userToken, type TestOrg } from './helpers/fixtures.ts';
import { finishedCall, uploadRecording } from './helpers/calls.ts';

runAuthMatrix({ method: 'GET', route: '/api/audit-logs', path: () => '/api/audit-logs', permission: 'audit_logs:read' });

async function auditLog(org: TestOrg, query = '') {
  const { app } = await testEnv();
  const res = await app.inject({ method: 'GET', url: `/api/audit-logs${query}`, headers: asRole(org, 'admin') });
  assert.equal(res.statusCode, 200, res.body);
  return res.json();
}

/** The id of the organization's key of that role, read with SQL. */
async function keyIdOf(org: TestOrg, role: string): Promise<{ id: string; name: string }> {
  const { database } = await testEnv();
  const { rows } = await database.pool.query('SELECT id, name FROM api_keys WHERE client_id = $1 AND role = $2 ORDER BY created_at LIMIT 1', [org.orgId, role]);
  return rows[0];
}

describe('audit log', () => {
  test('a change records who made it, from where, with which request, and the fields it set (never their values)', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const res = await app.inject({
      method: 'PATCH', url: '/api/settings/data',
      headers: asRole(org, 'admin', { 'user-agent': 'audit-test/1.0', 'x-request-id': 'req-audit-0001' }),
      payload: { transcript_retention_days: 90, redact_pii: true },
    });
    assert.equal(res.statusCode, 200, res.body);
    const key = await keyIdOf(org, 'admin');
    const { data } = await auditLog(org);
    assert.equal(data.length, 1);
    const [entry] = data;
    assert.match(entry.audit_id, /^aud_[A-Za-z0-9]{20}$/);
    assert.deepEqual({ ...entry, audit_id: undefined, at: undefined }, {
      audit_id: undefined, at: undefined,
      actor: { type: 'api_key', id: key.id, label: key.name },
      action: 'data_settings.update', resource_type: 'data_settings', resource_id: org.orgId,
      changed_fields: ['transcript_retention_days', 'redact_pii'],
      ip: '127.0.0.1', user_agent: 'audit-test/1.0', request_id: 'req-audit-0001',
    });
    assert.ok(Math.abs(Date.parse(entry.at) - Date.now()) < 60_000);
    // Another organization sees none of it.
    assert.equal((await auditLog(await createOrg())).data.length, 0);
  });

  test('issuing a recording link and downloading a recording are recorded as recording.access', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const agent = await createAgent(org, { recording_enabled: true });
    const call = await finishedCall(org, agent.agent_id);
    assert.equal((await uploadRecording(org, call.call_sid, toneWav(0.3, 440))).statusCode, 200);
    for (const route of ['stream', 'download']) {
      const res = await app.inject({ method: 'GET', url: `/api/calls/${call.call_sid}/recording/${route}`, headers: asRole(org, 'user') });
      assert.equal(res.statusCode, 200);
    }
    const user = await keyIdOf(org, 'user');
    const { data } = await auditLog(org, '?action=recording.access');
    assert.deepEqual(data.map((e: any) => [e.action, e.resource_type, e.resource_id, e.actor.id, e.changed_fields]), [
      ['recording.access', 'recording', call.call_sid, user.id, ['download']],
      ['recording.access', 'recording', call.call_sid, user.id, ['stream']],
    ]);
  });

  test('filters and keyset pages: actor_id, action, resource_type, resource_id, from, to', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    for (let i = 1; i <= 5; i++) {
      const res = await app.inject({ method: 'PATCH', url: '/api/settings/data', headers: asRole(org, 'admin'), payload: { transcript_retention_days: i } });
      assert.equal(res.statusCode, 200);
    }
    const all = (await auditLog(org)).data;
    assert.equal(all.length, 5);
    const times = all.map((e: any) => e.at);
    assert.deepEqual([...times].sort().reverse(), times, 'newest first');

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await auditLog(org, `?page_size=2${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...page.data.map((e: any) => e.audit_id));
      cursor = page.pagination.next_cursor;
    } while (cursor);
    assert.deepEqual(seen, all.map((e: any) => e.audit_id));

    const admin = await keyIdOf(org, 'admin');
    assert.equal((await auditLog(org, `?actor_id=${admin.id}`)).data.length, 5);
    assert.equal((await auditLog(org, '?actor_id=apikey_000000000000')).data.length, 0);
    assert.equal((await auditLog(org, '?resource_type=data_settings')).data.length, 5);
    assert.equal((await auditLog(org, `?resource_id=${org.orgId}`)).data.length, 5);
    assert.equal((await auditLog(org, '?action=agent.update')).data.length, 0);
    const middle = all[2].at;
    assert.equal((await auditLog(org, `?from=${encodeURIComponent(middle)}`)).data.filter((e: any) => e.at >= middle).length,
      (await auditLog(org, `?from=${encodeURIComponent(middle)}`)).data.length);
    assert.equal((await auditLog(org, `?to=${encodeURIComponent(all[4].at)}`)).data.filter((e: any) => e.at >= all[4].at).length, 0);
    const bad = await app.inject({ method: 'GET', url: '/api/audit-logs?from=yesterday', headers: asRole(org, 'admin') });
    assert.equal(bad.statusCode, 400);
  });

  test('the retention sweep records one system entry per call it changes', async () => {
    const { database, services } = await testEnv();
    const org = await createOrg();
    const agent = await createAgent(org, { recording_enabled: true });
    await services.dataSettings.update({ orgId: org.orgId, actor: { type: 'user', userId: org.userId, email: null }, role: 'admin', requestId: 'r' }, { transcript_retention_days: 5, recording_retention_days: 5 });
    const call = await finishedCall(org, agent.agent_id, { transcript: [{ role: 'agent', text: 'Hi', start_seconds: 0 }] });
    assert.equal((await uploadRecording(org, call.call_sid, toneWav(0.3, 440))).statusCode, 200);
    await database.pool.query("UPDATE calls SET created_at = now() - interval '6 days' WHERE client_id = $1", [org.orgId]);
    await new RetentionSweeper({ db: database.db, store: services.adapters.store, log: services.log, dataSettings: services.dataSettings, audit: services.audit }).sweep();
    const entries = (await auditLog(org, '?resource_type=call&actor_id=data-retention')).data;
    assert.deepEqual(entries.map((e: any) => [e.action, e.resource_id, e.actor]).sort(), [
      ['call.recording_delete', call.call_sid, { type: 'system', id: 'data-retention', label: 'data-retention' }],
      ['call.transcript_delete', call.call_sid, { type: 'system', id: 'data-retention', label: 'data-retention' }],
    ]);
  });

  test('entries are kept 365 days: the cleanup removes older ones only', async () => {
    const { database, services } = await testEnv();
    const org = await createOrg();
    const now = new Date();
    const insert = (id: string, daysAgo: number) => database.pool.query(
      `INSERT INTO audit_logs (id, client_id, at, actor_type, actor_id, action, resource_type, resource_id)
       VALUES ($1, $2, $3, 'system', 'test', 'agent.update', 'agent', 'agent_a1b2c3d4e5f6')`,
      [id, org.orgId, new Date(now.getTime() - daysAgo * 86_400_000)]);
    await insert('aud_old0000000000000000000', 366);
    await insert('aud_kept000000000000000000', 364);
    await services.audit.removeExpired(now);
    const { rows } = await database.pool.query('SELECT id FROM audit_logs WHERE client_id = $1 ORDER BY id', [org.orgId]);
    assert.deepEqual(rows.map((r) => r.id), ['aud_kept000000000000000000']);
  });

  /** Sends a request as the organization's admin and returns its answer's data. */
  async function as(org: TestOrg, method: 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) {
    const { app } = await testEnv();
    const res = await app.inject({ method, url, headers: asRole(org, 'admin'), ...(payload === undefined ? {} : { payload: payload as object }) });
    return res;
  }
  const trail = async (org: TestOrg, type: string) =>
    (await auditLog(org, `?resource_type=${type}`)).data.map((e: any) => [e.action, e.resource_id, e.changed_fields]).reverse();

  test('tools, integrations and documents: every change through the API has its entry; a refused change has none', async () => {
    const org = await createOrg();
    const tool = (await as(org, 'POST', '/api/tools', { tool_name: 'lookup', tool_description: 'Look up', webhook_url: 'https://example.com/hook' })).json().data;
    assert.equal((await as(org, 'POST', '/api/tools', { tool_name: 'lookup', tool_description: 'Again', webhook_url: 'https://example.com/hook' })).statusCode, 409);
    assert.equal((await as(org, 'PATCH', `/api/tools/${tool.tool_id}`, { tool_description: 'Looks up orders' })).statusCode, 200);
    assert.equal((await as(org, 'DELETE', `/api/tools/${tool.tool_id}`)).statusCode, 200);
    assert.equal((await as(org, 'DELETE', `/api/tools/${tool.tool_id}`)).statusCode, 404);
    assert.deepEqual(await trail(org, 'tool'), [
      // A create also sets the fields its schema defaults (http_method, timeout_seconds).
      ['tool.create', tool.tool_id, ['tool_name', 'tool_description', 'webhook_url', 'http_method', 'timeout_seconds']],
      ['tool.update', tool.tool_id, ['tool_description']],
      ['tool.delete', tool.tool_id, []],
    ]);

    const secret = 'tok_never_in_the_audit_log_93f1';
    const integration = (await as(org, 'POST', '/api/integrations', { name: 'Carrier', provider: 'carrier_a', category: 'telephony', credentials: { account_sid: 'AC123', auth_token: secret } })).json().data;
    assert.equal((await as(org, 'PATCH', `/api/integrations/${integration.integration_id}`, { credentials: { account_sid: 'AC123', auth_token: `${secret}2` } })).statusCode, 200);
    assert.equal((await as(org, 'DELETE', `/api/integrations/${integration.integration_id}`)).statusCode, 200);
    assert.deepEqual(await trail(org, 'integration'), [
      ['integration.create', integration.integration_id, ['name', 'provider', 'category', 'credentials']],
      ['integration.update', integration.integration_id, ['credentials']],
      ['integration.delete', integration.integration_id, []],
    ]);
    const { database } = await testEnv();
    const { rows } = await database.pool.query('SELECT count(*)::int AS n FROM audit_logs WHERE client_id = $1 AND row_to_json(audit_logs)::text LIKE $2', [org.orgId, `%${secret}%`]);
    assert.equal(rows[0].n, 0, 'no credential is ever written to the audit log');

    const doc = (await as(org, 'POST', '/api/knowledge-base', { name: 'Hours', text: 'Open 8 to 18.' })).json().data;
    assert.equal((await as(org, 'POST', `/api/knowledge-base/${doc.documentation_id}/reprocess`)).statusCode, 200);
    assert.equal((await as(org, 'DELETE', `/api/knowledge-base/${doc.documentation_id}`)).statusCode, 200);
    assert.deepEqual(await trail(org, 'document'), [
      ['document.create', doc.documentation_id, ['name', 'text']],
      ['document.reprocess', doc.documentation_id, []],
      ['document.delete', doc.documentation_id, []],
    ]);
  });

  test('a user creating an organization is its first entry', async () => {
    const { app } = await testEnv();
    const email = uniqueEmail('founder');
    const token = await userToken({ sub: `sub-${email}`, email });
    const res = await app.inject({ method: 'POST', url: '/api/auth/organizations', headers: { authorization: `Bearer ${token}` }, payload: { name: 'Audited Inc' } });
    assert.equal(res.statusCode, 200, res.body);
    const orgId = res.json().data.organization_id;
    const list = await app.inject({ method: 'GET', url: '/api/audit-logs', headers: { authorization: `Bearer ${token}`, 'x-organization-id': orgId } });
    assert.equal(list.statusCode, 200, list.body);
    const [entry] = list.json().data;
    assert.equal(entry.action, 'organization.create');
    assert.equal(entry.resource_id, orgId);
    assert.equal(entry.actor.type, 'user');
    assert.equal(entry.actor.label, email);
  });
});
