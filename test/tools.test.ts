import type { FastifyInstance } from 'fastify';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { runAuthMatrix } from './helpers/auth-matrix.ts';
import { TEST_ENCRYPTION_KEY, testConfig, testEnv, TEST_JWT_SECRET, buildTestApp } from './helpers/env.ts';
import { asRole, createAgent, createOrg, type TestOrg } from './helpers/fixtures.ts';

let seq = 0;
async function createTool(org: TestOrg, body: Record<string, unknown> = {}, target?: FastifyInstance) {
  const app = target ?? (await testEnv()).app;
  const res = await app.inject({
    method: 'POST', url: '/api/tools', headers: asRole(org, 'admin'),
    payload: { tool_name: `tool_${++seq}`, tool_description: 'Looks things up', webhook_url: 'https://example.com/hook', ...body },
  });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data;
}

const toolPath = async (org: TestOrg) => `/api/tools/${(await createTool(org)).tool_id}`;
runAuthMatrix({ method: 'POST', route: '/api/tools', path: () => '/api/tools', body: () => ({ tool_name: `m_${++seq}`, tool_description: 'd', webhook_url: 'https://e.com' }), permission: 'tools:create' });
runAuthMatrix({ method: 'GET', route: '/api/tools', path: () => '/api/tools', permission: 'tools:read' });
runAuthMatrix({ method: 'GET', route: '/api/tools/{tool_id}', path: toolPath, permission: 'tools:read', foreignStatus: 404 });
runAuthMatrix({ method: 'PATCH', route: '/api/tools/{tool_id}', path: toolPath, body: () => ({ timeout_seconds: 5 }), permission: 'tools:update', foreignStatus: 403 });
runAuthMatrix({ method: 'DELETE', route: '/api/tools/{tool_id}', path: toolPath, permission: 'tools:delete', foreignStatus: 404 });
runAuthMatrix({ method: 'POST', route: '/api/tools/{tool_id}/test', path: async (org) => `${await toolPath(org)}/test`, body: () => ({}), permission: 'tools:update', foreignStatus: 404 });

describe('tools', () => {
  test('create applies defaults and every bound of the specification', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const tool = await createTool(org, { parameters: [{ name: 'city', type: 'string', required: true }] });
    assert.match(tool.tool_id, /^tool_[a-f0-9]{12}$/);
    assert.equal(tool.http_method, 'POST');
    assert.equal(tool.timeout_seconds, 10);
    assert.deepEqual(tool.headers, {});
    const bad = {
      tool_name: ['has space', 'x'.repeat(51), ''],
      tool_description: ['', 'd'.repeat(501)],
      webhook_url: ['ftp://example.com/x', `https://example.com/${'a'.repeat(490)}`, 'not a url'],
      http_method: ['FETCH'],
      timeout_seconds: [0, 61, 1.5],
      parameters: [[{ name: 'a', type: 'date' }], [{ name: 'a', type: 'string' }, { name: 'a', type: 'number' }]],
    } as Record<string, unknown[]>;
    for (const [field, values] of Object.entries(bad)) {
      for (const value of values) {
        const res = await app.inject({
          method: 'POST', url: '/api/tools', headers: asRole(org, 'admin'),
          payload: { tool_name: `ok_${++seq}`, tool_description: 'd', webhook_url: 'https://e.com', [field]: value },
        });
        assert.equal(res.statusCode, 400, `${field}=${JSON.stringify(value).slice(0, 40)}: ${res.body}`);
        assert.ok(res.json().errors.some((e: any) => e.path.startsWith(`body.${field}`)), res.body);
      }
    }
    for (const ok of [{ tool_name: 'A_z_09' }, { tool_name: 'n'.repeat(50) }, { timeout_seconds: 1 }, { timeout_seconds: 60 }] as Array<Record<string, unknown>>) {
      const created = await createTool(org, ok);
      for (const [field, value] of Object.entries(ok)) assert.equal(created[field], value, `${field} at its bound is kept`);
    }
  });

  test('a tool name is unique in an organization, not across organizations', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const other = await createOrg();
    await createTool(org, { tool_name: 'lookup_order' });
    await createTool(other, { tool_name: 'lookup_order' });
    const dup = await app.inject({
      method: 'POST', url: '/api/tools', headers: asRole(org, 'admin'),
      payload: { tool_name: 'lookup_order', tool_description: 'd', webhook_url: 'https://e.com' },
    });
    assert.equal(dup.statusCode, 409);
    assert.equal(dup.json().code, 'tool_name_taken');
    const second = await createTool(org, { tool_name: 'second' });
    const rename = await app.inject({ method: 'PATCH', url: `/api/tools/${second.tool_id}`, headers: asRole(org, 'admin'), payload: { tool_name: 'lookup_order' } });
    assert.equal(rename.statusCode, 409);
  });

  test('update changes only the fields given; headers and parameters replace entirely; 404 and 403', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const other = await createOrg();
    const tool = await createTool(org, {
      headers: { Authorization: 'Bearer a', 'X-Tenant': 't1' }, parameters: [{ name: 'a', type: 'string' }, { name: 'b', type: 'integer' }],
    });
    const res = await app.inject({
      method: 'PATCH', url: `/api/tools/${tool.tool_id}`, headers: asRole(org, 'agent_manager'),
      payload: { headers: { 'X-Other': '1' }, parameters: [{ name: 'c', type: 'boolean' }], timeout_seconds: 30 },
    });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(body.success, true);
    assert.equal(typeof body.message, 'string');
    assert.deepEqual(body.data.headers, { 'X-Other': '1' });
    assert.deepEqual(body.data.parameters, [{ name: 'c', type: 'boolean' }]);
    assert.equal(body.data.timeout_seconds, 30);
    assert.equal(body.data.tool_name, tool.tool_name);
    assert.equal(body.data.webhook_url, tool.webhook_url);
    assert.ok(body.data.updated_at >= tool.updated_at);

    const missing = await app.inject({ method: 'PATCH', url: '/api/tools/tool_000000000000', headers: asRole(org, 'admin'), payload: { timeout_seconds: 5 } });
    assert.equal(missing.statusCode, 404);
    const foreign = await app.inject({ method: 'PATCH', url: `/api/tools/${tool.tool_id}`, headers: asRole(other, 'admin'), payload: { timeout_seconds: 5 } });
    assert.equal(foreign.statusCode, 403);
    const untouched = await app.inject({ url: `/api/tools/${tool.tool_id}`, headers: asRole(org, 'admin') });
    assert.equal(untouched.json().data.timeout_seconds, 30);
    const tooLong = await app.inject({ method: 'PATCH', url: `/api/tools/${tool.tool_id}`, headers: asRole(org, 'admin'), payload: { timeout_seconds: 61 } });
    assert.equal(tooLong.statusCode, 400);
  });

  test('delete removes the tool from the agents that offered it', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const tool = await createTool(org);
    const agent = await createAgent(org, { tool_ids: [tool.tool_id] });
    assert.deepEqual(agent.tool_ids, [tool.tool_id]);
    const del = await app.inject({ method: 'DELETE', url: `/api/tools/${tool.tool_id}`, headers: asRole(org, 'admin') });
    assert.equal(del.statusCode, 200);
    const after = await app.inject({ url: `/api/agents/${agent.agent_id}`, headers: asRole(org, 'admin') });
    assert.deepEqual(after.json().data.tool_ids, []);
  });
});

describe('tool webhook test call', () => {
  let server: http.Server;
  let base: string;
  const received: Array<{ method: string; url: string; body: string; headers: http.IncomingHttpHeaders }> = [];
  let allowingApp: FastifyInstance;

  before(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        received.push({ method: req.method!, url: req.url!, body, headers: req.headers });
        if (req.url!.startsWith('/big')) return res.end('x'.repeat(10_000));
        if (req.url!.startsWith('/redirect-private')) { res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data' }); return res.end(); }
        if (req.url!.startsWith('/slow')) return setTimeout(() => res.end('late'), 3000);
        if (req.url!.startsWith('/fail')) { res.writeHead(500); return res.end('boom'); }
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ result: 'ok' }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const { database, tmpDir } = await testEnv();
    allowingApp = await buildTestApp(testConfig(tmpDir, { ALLOWED_NETWORKS: '127.0.0.1/32' }));
  });
  after(async () => {
    await allowingApp?.close();
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r));
  });

  /** A tool whose URL the rule refuses now (saved under a wider ALLOWED_NETWORKS, say): stored as it is. */
  async function storedTool(org: TestOrg, url: string) {
    const tool = await createTool(org, { webhook_url: 'https://example.com/hook' });
    const { database } = await testEnv();
    await database.pool.query('UPDATE tools SET webhook_url = $1 WHERE id = $2', [url, tool.tool_id]);
    return tool;
  }

  const refusedByDefault = (port: string) => [
    `http://127.0.0.1:${port}/hook`, `http://localhost:${port}/hook`, 'http://10.1.2.3/hook', 'http://169.254.169.254/latest/meta-data',
    'http://[::1]/hook', 'http://[::ffff:127.0.0.1]/hook', 'http://[::ffff:a9fe:a9fe]/', 'http://0.0.0.0/', 'http://2130706433/',
  ];
  const embedding127 = ['[::127.0.0.1]', '[::7f00:1]', '[::ffff:0:127.0.0.1]', '[::ffff:0:7f00:1]', '[64:ff9b:1::7f00:1]'];

  test('a webhook_url the outbound rule refuses is refused at create and update: 400 destination_refused naming webhook_url', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const port = new URL(base).port;
    const kept = await createTool(org);
    const cases: Array<[FastifyInstance, string]> = [
      ...refusedByDefault(port).map((url) => [app, url] as [FastifyInstance, string]),
      ...embedding127.flatMap((host) => [app, allowingApp].map((target) => [target, `http://${host}:${port}/hook`] as [FastifyInstance, string])),
    ];
    for (const [target, url] of cases) {
      const created = await target.inject({
        method: 'POST', url: '/api/tools', headers: asRole(org, 'admin'),
        payload: { tool_name: `refused_${++seq}`, tool_description: 'd', webhook_url: url },
      });
      const updated = await target.inject({ method: 'PATCH', url: `/api/tools/${kept.tool_id}`, headers: asRole(org, 'admin'), payload: { webhook_url: url } });
      for (const res of [created, updated]) {
        assert.equal(res.statusCode, 400, `${url}: ${res.body}`);
        assert.equal(res.json().code, 'destination_refused', url);
        assert.equal(res.json().errors[0].path, 'body.webhook_url');
        assert.match(res.json().errors[0].message, /outbound address rule/);
      }
    }
    const listed = await app.inject({ url: '/api/tools', headers: asRole(org, 'admin') });
    assert.deepEqual(listed.json().data.map((t: { webhook_url: string }) => t.webhook_url), ['https://example.com/hook']);
    // Where ALLOWED_NETWORKS covers the address, the same URL is saved.
    const allowed = await createTool(org, { webhook_url: `${base}/hook` }, allowingApp);
    assert.equal(allowed.webhook_url, `${base}/hook`);
    assert.equal(received.length, 0, 'saving a tool calls nothing');
  });

  test('loopback, private, metadata and IPv6-mapped destinations are refused by default at call time too, by name and by address', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const port = new URL(base).port;
    const before = received.length;
    for (const url of refusedByDefault(port)) {
      const tool = await storedTool(org, url);
      const res = await app.inject({ method: 'POST', url: `/api/tools/${tool.tool_id}/test`, headers: asRole(org, 'admin'), payload: {} });
      assert.equal(res.statusCode, 400, `${url}: ${res.body}`);
      assert.equal(res.json().code, 'destination_refused', url);
    }
    assert.equal(received.length, before, 'nothing reached the local server');
  });

  test('IPv6 forms embedding 127.0.0.1 are refused at call time, even when 127.0.0.1 is allowed', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const port = new URL(base).port;
    const before = received.length;
    for (const host of embedding127) {
      const tool = await storedTool(org, `http://${host}:${port}/hook`);
      for (const target of [app, allowingApp]) {
        const res = await target.inject({ method: 'POST', url: `/api/tools/${tool.tool_id}/test`, headers: asRole(org, 'admin'), payload: {} });
        assert.equal(res.statusCode, 400, `${host}: ${res.body}`);
        assert.equal(res.json().code, 'destination_refused', host);
      }
    }
    assert.equal(received.length, before, 'nothing reached the local server');
  });

  test('an allowed destination is called once with sample arguments; status, latency and a capped body come back', async () => {
    const org = await createOrg();
    const tool = await createTool(org, {
      webhook_url: `${base}/hook`, headers: { 'X-Secret': 's3' },
      parameters: [{ name: 'city', type: 'string' }, { name: 'nights', type: 'integer' }, { name: 'kind', type: 'string', enum: ['suite', 'room'] }],
    }, allowingApp);
    const before = received.length;
    const res = await allowingApp.inject({ method: 'POST', url: `/api/tools/${tool.tool_id}/test`, headers: asRole(org, 'agent_manager') });
    assert.equal(res.statusCode, 200, res.body);
    const data = res.json().data;
    assert.equal(data.ok, true);
    assert.equal(data.status_code, 200);
    assert.equal(typeof data.latency_ms, 'number');
    assert.deepEqual(JSON.parse(data.body), { result: 'ok' });
    assert.equal(received.length, before + 1, 'called exactly once');
    const call = received.at(-1)!;
    assert.equal(call.method, 'POST');
    assert.equal(call.headers['x-secret'], 's3');
    assert.deepEqual(JSON.parse(call.body), { tool_name: tool.tool_name, arguments: { city: 'sample city', nights: 1, kind: 'suite' } });

    const getTool = await createTool(org, { webhook_url: `${base}/big`, http_method: 'GET' }, allowingApp);
    const big = (await allowingApp.inject({ method: 'POST', url: `/api/tools/${getTool.tool_id}/test`, headers: asRole(org, 'admin'), payload: { arguments: { q: 'x y' } } })).json().data;
    assert.equal(big.body.length, 4096);
    assert.equal(big.truncated, true);
    assert.equal(received.at(-1)!.url, '/big?q=x+y');

    const failing = await createTool(org, { webhook_url: `${base}/fail` }, allowingApp);
    const failed = (await allowingApp.inject({ method: 'POST', url: `/api/tools/${failing.tool_id}/test`, headers: asRole(org, 'admin') })).json().data;
    assert.deepEqual([failed.ok, failed.status_code, failed.body], [false, 500, 'boom']);
  });

  test('a redirect to a private address is refused; a slow webhook times out without hanging', async () => {
    const org = await createOrg();
    const redirecting = await createTool(org, { webhook_url: `${base}/redirect-private` }, allowingApp);
    const res = await allowingApp.inject({ method: 'POST', url: `/api/tools/${redirecting.tool_id}/test`, headers: asRole(org, 'admin') });
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().code, 'destination_refused');
    const slow = await createTool(org, { webhook_url: `${base}/slow`, timeout_seconds: 1 }, allowingApp);
    const timed = (await allowingApp.inject({ method: 'POST', url: `/api/tools/${slow.tool_id}/test`, headers: asRole(org, 'admin') })).json().data;
    assert.equal(timed.ok, false);
    assert.match(timed.error, /timed out/);
    assert.ok(timed.latency_ms < 2500);
  });
});
