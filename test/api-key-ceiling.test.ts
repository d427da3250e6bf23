import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { testEnv } from './helpers/env.ts';
import { asRole, createOrg, keyHeaders, uniqueEmail, userToken, type TestOrg } from './helpers/fixtures.ts';
import { PERMISSION_TABLE } from './helpers/permission-table.ts';

/**
 * Issue 28 item 2: an API key hands on no more than it holds. A key creates keys within its role,
 * scopes and allowed_ips, and invites only members who would hold no more than it does.
 */
describe('the ceiling of what an API key creates', () => {
  let org: TestOrg;
  before(async () => {
    org = await createOrg('Ceiling');
  });

  type Sent = { remoteAddress?: string };
  const post = async (key: string, url: string, payload: Record<string, unknown>, options: Sent = {}) =>
    (await testEnv()).app.inject({ method: 'POST', url, headers: keyHeaders(org, key), payload, remoteAddress: options.remoteAddress });
  /** A key the organization's (unrestricted) admin key creates. */
  const narrowedKey = async (body: Record<string, unknown>) => {
    const res = await post(org.keys.admin, '/api/api-keys', { name: 'narrowed', ...body });
    assert.equal(res.statusCode, 200, res.body);
    return res.json().data.key as string;
  };
  const keyNames = async () => {
    const { app } = await testEnv();
    const res = await app.inject({ url: '/api/api-keys?page_size=100', headers: asRole(org, 'admin') });
    return res.json().data.map((k: { name: string }) => k.name) as string[];
  };
  const refused = (res: { statusCode: number; body: string; json(): any }, code: string, detail?: RegExp) => {
    assert.equal(res.statusCode, 403, res.body);
    assert.equal(res.json().code, code);
    if (detail) assert.match(res.json().detail, detail);
  };

  test("the issue's case: a key narrowed to api_keys:create and 127.0.0.1 cannot mint an unrestricted admin key", async () => {
    const narrow = await narrowedKey({ role: 'admin', scopes: ['api_keys:create'], allowed_ips: ['127.0.0.1'] });
    // inject's client address is 127.0.0.1, so the narrowed key itself is accepted.
    refused(await post(narrow, '/api/api-keys', { name: 'wide-1', role: 'admin' }), 'scope_missing', /scopes/);
    // Scopes listed, but no address rule: wider than the caller's 127.0.0.1.
    refused(await post(narrow, '/api/api-keys', { name: 'wide-2', role: 'admin', scopes: ['api_keys:create'] }), 'allowed_ips_too_wide');
    // A scope the caller does not hold, with or without another it does.
    refused(await post(narrow, '/api/api-keys', { name: 'wide-3', role: 'admin', scopes: ['api_keys:create', 'audit_logs:read'], allowed_ips: ['127.0.0.1'] }),
      'scope_missing', /audit_logs:read/);
    refused(await post(narrow, '/api/api-keys', { name: 'wide-4', role: 'user', scopes: ['calls:read'], allowed_ips: ['127.0.0.1'] }), 'scope_missing', /calls:read/);
    // A wider network around the caller's address.
    refused(await post(narrow, '/api/api-keys', { name: 'wide-5', role: 'admin', scopes: ['api_keys:create'], allowed_ips: ['127.0.0.0/8'] }),
      'allowed_ips_too_wide', /127\.0\.0\.0\/8/);
    assert.deepEqual((await keyNames()).filter((n) => n.startsWith('wide-')), [], 'no refused key was created');

    // Within every bound: created, and exactly as narrow as asked.
    const within = await post(narrow, '/api/api-keys', { name: 'within', role: 'agent_manager', scopes: ['api_keys:create'], allowed_ips: ['127.0.0.1/32'] });
    assert.equal(within.statusCode, 200, within.body);
    assert.deepEqual([within.json().data.role, within.json().data.scopes, within.json().data.allowed_ips], ['agent_manager', ['api_keys:create'], ['127.0.0.1/32']]);
    // The role ceiling still holds for a narrowed key.
    const manager = await narrowedKey({ role: 'agent_manager', scopes: ['api_keys:create'] });
    refused(await post(manager, '/api/api-keys', { name: 'wide-6', role: 'admin', scopes: ['api_keys:create'] }), 'role_too_high');
  });

  test("allowed_ips: every new network lies inside one of the caller's, IPv4 and IPv6", async () => {
    // Narrowed by addresses only: its scopes are its role's, so new keys may leave scopes empty.
    const key = await narrowedKey({ role: 'agent_manager', allowed_ips: ['10.0.0.0/8', '2001:db8::/32'] });
    const from = { remoteAddress: '10.1.2.3' };
    const cases: Array<[string[], number]> = [
      [['10.1.0.0/16'], 200], [['10.1.2.3'], 200], [['10.255.255.255/32', '2001:db8:1::/48'], 200], [['::ffff:10.9.9.9'], 200],
      [['11.0.0.0/8'], 403], [['10.0.0.0/7'], 403], [['0.0.0.0/0'], 403], [['2001:db9::/32'], 403], [['2001:db8::/31'], 403],
      [['10.1.0.0/16', '192.168.0.1'], 403], [[], 403],
    ];
    for (const [allowedIps, status] of cases) {
      const res = await post(key, '/api/api-keys', { name: 'by-address', role: 'user', ...(allowedIps.length ? { allowed_ips: allowedIps } : {}) }, from);
      assert.equal(res.statusCode, status, `${JSON.stringify(allowedIps)}: ${res.body}`);
      if (status === 403) assert.equal(res.json().code, 'allowed_ips_too_wide');
      else assert.deepEqual(res.json().data.scopes, []);
    }
  });

  test('unrestricted keys and signed-in users keep creating any key up to their role', async () => {
    const { app } = await testEnv();
    const byKey = await post(org.keys.admin, '/api/api-keys', { name: 'from-admin-key', role: 'admin' });
    assert.equal(byKey.statusCode, 200, byKey.body);
    const email = uniqueEmail('ceiling');
    const token = await userToken({ sub: `sub-${email}`, email });
    const created = await app.inject({ method: 'POST', url: '/api/auth/organizations', headers: { authorization: `Bearer ${token}` }, payload: { name: 'Ceiling owners' } });
    const orgId = created.json().data.organization_id;
    const byUser = await app.inject({
      method: 'POST', url: '/api/api-keys', headers: { authorization: `Bearer ${token}`, 'x-organization-id': orgId }, payload: { name: 'from-user', role: 'admin' },
    });
    assert.equal(byUser.statusCode, 200, byUser.body);
    assert.deepEqual([byUser.json().data.scopes, byUser.json().data.allowed_ips], [[], []]);
  });

  test('invitations made with a key: the invitee may hold no permission the key lacks, and a key with allowed_ips invites no one', async () => {
    const invite = (key: string, role: string, options: Sent = {}) =>
      post(key, '/api/auth/organizations/invitations', { email: uniqueEmail('invitee'), role }, options);
    const userPermissions = Object.entries(PERMISSION_TABLE).filter(([, roles]) => roles.includes('user')).map(([p]) => p);

    const onlyInvite = await narrowedKey({ role: 'admin', scopes: ['invitations:create'] });
    refused(await invite(onlyInvite, 'user'), 'scope_missing', /agents:read/);
    // A key whose scopes cover every permission of a user may invite users, not agent managers.
    const coversUsers = await narrowedKey({ role: 'admin', scopes: ['invitations:create', ...userPermissions] });
    assert.equal((await invite(coversUsers, 'user')).statusCode, 200);
    refused(await invite(coversUsers, 'agent_manager'), 'scope_missing', /agents:create/);
    // A member signs in from anywhere: a key bound to addresses may not add one.
    const boundToAddress = await narrowedKey({ role: 'admin', allowed_ips: ['127.0.0.1'] });
    refused(await invite(boundToAddress, 'user'), 'allowed_ips_too_wide');
    // An unrestricted admin key invites any role, as before.
    assert.equal((await invite(org.keys.admin, 'admin')).statusCode, 200);
  });
});
