import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildTestApp, testConfig, testEnv } from './helpers/env.ts';
import { asRole, createOrg, keyHeaders, type TestOrg } from './helpers/fixtures.ts';

/** extensions.md §6: API key `scopes` and `allowed_ips`, checked by the authenticator. */
describe('API key scopes and allowed_ips', () => {
  let org: TestOrg;
  let proxied: FastifyInstance;
  before(async () => {
    org = await createOrg();
    const { tmpDir } = await testEnv();
    // Behind a proxy on 127.0.0.1: its X-Forwarded-For gives the client's address.
    proxied = await buildTestApp(testConfig(tmpDir, { TRUST_PROXY: '127.0.0.1' }));
  });
  after(async () => {
    await proxied?.close();
  });

  const createKey = async (body: Record<string, unknown>) => {
    const { app } = await testEnv();
    const res = await app.inject({ method: 'POST', url: '/api/api-keys', headers: asRole(org, 'admin'), payload: { name: 'narrow', role: 'agent_manager', ...body } });
    assert.equal(res.statusCode, 200, res.body);
    return res.json().data as { key: string; scopes: string[]; allowed_ips: string[]; key_id: string };
  };
  const send = async (key: string, method: 'GET' | 'POST', url: string, options: { remoteAddress?: string; headers?: Record<string, string>; app?: FastifyInstance } = {}) => {
    const app = options.app ?? (await testEnv()).app;
    return app.inject({
      method, url, headers: keyHeaders(org, key, options.headers), remoteAddress: options.remoteAddress,
      ...(method === 'POST' ? { payload: { agent_name: 'Scoped' } } : {}),
    });
  };

  test('a key narrowed by scopes needs the scope as well as the role: 403 scope_missing otherwise', async () => {
    const key = await createKey({ scopes: ['agents:read', 'calls:read'] });
    assert.deepEqual([key.scopes, key.allowed_ips], [['agents:read', 'calls:read'], []]);
    assert.equal((await send(key.key, 'GET', '/api/agents')).statusCode, 200);
    assert.equal((await send(key.key, 'GET', '/api/calls')).statusCode, 200);
    // agent_manager may create agents, the scopes do not allow it.
    const refused = await send(key.key, 'POST', '/api/agents');
    assert.equal(refused.statusCode, 403, refused.body);
    assert.equal(refused.json().code, 'scope_missing');
    assert.match(refused.json().detail, /agents:create/);
    const other = await send(key.key, 'GET', '/api/phone-numbers');
    assert.equal(other.json().code, 'scope_missing');
    // A scope above the role gives nothing: the role still decides first.
    const user = await (await testEnv()).app.inject({ method: 'POST', url: '/api/api-keys', headers: asRole(org, 'admin'), payload: { name: 'u', role: 'user', scopes: ['agents:create'] } });
    const denied = await send(user.json().data.key, 'POST', '/api/agents');
    assert.equal(denied.json().code, 'permission_denied');
    // Unscoped keys keep their role's permissions; scopes are shown on list and get.
    const { app } = await testEnv();
    const got = (await app.inject({ url: `/api/api-keys/${key.key_id}`, headers: asRole(org, 'admin') })).json().data;
    assert.deepEqual(got.scopes, ['agents:read', 'calls:read']);
  });

  test('allowed_ips: IPv4 and IPv6 networks and single addresses; any other address is 403 ip_not_allowed', async () => {
    const key = await createKey({ allowed_ips: ['10.20.0.0/16', '2001:db8:abcd::/48', '192.0.2.7'] });
    const cases: Array<[string, number]> = [
      ['10.20.3.4', 200], ['10.21.0.1', 403], ['2001:db8:abcd:12::1', 200], ['2001:db8:abce::1', 403],
      ['192.0.2.7', 200], ['192.0.2.8', 403], ['::ffff:10.20.9.9', 200], ['127.0.0.1', 403],
    ];
    for (const [address, status] of cases) {
      const res = await send(key.key, 'GET', '/api/agents', { remoteAddress: address });
      assert.equal(res.statusCode, status, `${address}: ${res.body}`);
      if (status === 403) assert.equal(res.json().code, 'ip_not_allowed');
    }
    // The address check applies to every authenticated route, not only those with a permission.
    assert.equal((await send(key.key, 'GET', '/api/auth/me', { remoteAddress: '10.21.0.1' })).json().code, 'ip_not_allowed');
  });

  test('X-Forwarded-For counts only from a proxy TRUST_PROXY names', async () => {
    const key = await createKey({ allowed_ips: ['10.20.0.0/16'] });
    const forwarded = { 'x-forwarded-for': '10.20.1.1' };
    // Without TRUST_PROXY the header is the client's claim: the socket address (127.0.0.1) decides.
    assert.equal((await send(key.key, 'GET', '/api/agents', { headers: forwarded, remoteAddress: '127.0.0.1' })).statusCode, 403);
    // Through the trusted proxy the forwarded address decides, both ways.
    assert.equal((await send(key.key, 'GET', '/api/agents', { headers: forwarded, remoteAddress: '127.0.0.1', app: proxied })).statusCode, 200);
    const outside = await send(key.key, 'GET', '/api/agents', { headers: { 'x-forwarded-for': '10.99.1.1' }, remoteAddress: '127.0.0.1', app: proxied });
    assert.equal(outside.json().code, 'ip_not_allowed');
    // A request not from the proxy cannot forward an address.
    assert.equal((await send(key.key, 'GET', '/api/agents', { headers: forwarded, remoteAddress: '10.99.0.5', app: proxied })).statusCode, 403);
  });

  test('bad scopes and networks are 400 with the failing entries', async () => {
    const { app } = await testEnv();
    const res = await app.inject({
      method: 'POST', url: '/api/api-keys', headers: asRole(org, 'admin'),
      payload: { name: 'bad', role: 'user', scopes: ['calls:read', 'calls:fly'], allowed_ips: ['10.0.0.0/8', '300.1.1.1', '10.0.0.0/33', 'example.com'] },
    });
    assert.equal(res.statusCode, 400, res.body);
    assert.deepEqual(res.json().errors.map((e: { path: string }) => e.path), ['body.scopes.1', 'body.allowed_ips.1', 'body.allowed_ips.2', 'body.allowed_ips.3']);
    assert.equal((await app.inject({ url: '/api/api-keys?page_size=100', headers: asRole(org, 'admin') })).json().data.filter((k: any) => k.name === 'bad').length, 0);
  });
});
