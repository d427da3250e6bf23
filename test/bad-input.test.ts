import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { testEnv } from './helpers/env.ts';
import { createOrg, keyHeaders } from './helpers/fixtures.ts';
import { createCampaign } from './helpers/campaigns.ts';

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

// The classes of input the review's fuzz turned into 500s, each now a 400 naming what is wrong.
const CASES: Array<[string, string, unknown, string, string]> = [
  ['POST', '/api/agents', { agent_name: 'a\u0000b' }, 'validation_error', 'body.agent_name'],
  ['POST', '/api/agents', { agent_name: 'a\ud800b' }, 'validation_error', 'body.agent_name'],
  ['GET', '/api/agents/agent_%00', undefined, 'validation_error', 'params.agent_id'],
  ['GET', '/api/calls?agent_id=a%00b', undefined, 'validation_error', 'querystring.agent_id'],
  ['GET', '/api/agents?page_size=Infinity', undefined, 'validation_error', 'querystring.page_size'],
  ['GET', '/api/calls?limit=Infinity', undefined, 'validation_error', 'querystring.limit'],
  ['GET', `/api/agents?cursor=${b64(['+275760-09-13T00:00:00.000Z', 'x'])}`, undefined, 'invalid_cursor', ''],
  ['GET', `/api/calls?cursor=${b64(['-271821-04-20T00:00:00.000Z', 'x'])}`, undefined, 'invalid_cursor', ''],
  ['GET', `/api/knowledge-base?sort_by=size&cursor=${b64([1.5, 'x'])}`, undefined, 'invalid_cursor', ''],
  ['GET', `/api/knowledge-base?sort_by=name&cursor=${b64(['a\u0000', 'x'])}`, undefined, 'invalid_cursor', ''],
  ['POST', '/api/agents', { agent_name: 'x', tool_ids: null }, 'validation_error', 'body.tool_ids'],
  ['POST', '/api/agents', { agent_name: 'x', tool_ids: '' }, 'validation_error', 'body.tool_ids'],
  ['POST', '/api/agents', { agent_name: 'x', documentation_ids: [''] }, 'validation_error', 'body.documentation_ids.0'],
  ['GET', '/api/analytics/calls/daily?start_date=9999-12-01&end_date=9999-12-31', undefined, 'validation_error', 'querystring.end_date'],
  ['GET', '/api/calls?from=9999-12-31&to=9999-12-31', undefined, 'validation_error', 'querystring.to'],
  ['POST', '/api/tools', { tool_name: 't1', tool_description: 'd', webhook_url: 'http://a:99999/', http_method: 'POST' }, 'validation_error', 'body.webhook_url'],
  ['POST', '/api/tools', { tool_name: 't2', tool_description: 'd', webhook_url: 'http://[::1', http_method: 'POST' }, 'validation_error', 'body.webhook_url'],
  ['POST', '/api/tools', { tool_name: 't3', tool_description: 'd', webhook_url: 'http://%zz/', http_method: 'POST' }, 'validation_error', 'body.webhook_url'],
];

describe('bad input is a 400 naming the field, never a 500', () => {
  for (const [method, url, body, code, field] of CASES) {
    test(`${method} ${decodeURIComponent(url).slice(0, 70)} ${body === undefined ? '' : JSON.stringify(body).slice(0, 60)}`, async () => {
      const { app } = await testEnv();
      const org = await createOrg();
      const res = await app.inject({ method: method as 'GET', url, headers: keyHeaders(org, org.keys.admin), ...(body === undefined ? {} : { payload: body as object }) });
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(res.json().code, code);
      if (field) assert.ok(res.json().errors.some((e: { path: string }) => e.path === field), res.body);
    });
  }

  test('malformed multipart uploads: no boundary, an unterminated body, JSON sent as multipart, a NUL in a field', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    for (const [contentType, payload] of [
      ['multipart/form-data', '--x\r\nContent-Disposition: form-data; name="name"\r\n\r\nabc'],
      ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="name"\r\n\r\nab'],
      ['multipart/form-data; boundary=zzz', '{"name":"x","text":"y"}'],
      ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="name"\r\n\r\na\u0000b\r\n--x--\r\n'],
    ]) {
      const res = await app.inject({ method: 'POST', url: '/api/knowledge-base', headers: { ...keyHeaders(org, org.keys.admin), 'content-type': contentType! }, payload });
      assert.equal(res.statusCode, 400, `${contentType}: ${res.body}`);
      assert.equal(res.json().code, 'validation_error');
    }
  });
  test('a body in an unsupported content type is 415 unsupported_media_type with the Error body, on every kind of route', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const campaign = await createCampaign(org);
    const json = JSON.stringify({ contacts: [{ phone_number: '+14155550100' }] });
    const targets: Array<[string, string, string]> = [
      ['POST', `/api/campaigns/${campaign.campaign_id}/contacts`, json],
      ['POST', '/api/agents', JSON.stringify({ agent_name: 'Plain' })],
      ['POST', '/api/tools', '{}'],
      ['POST', `/api/campaigns/${campaign.campaign_id}/start`, ''],
    ];
    for (const [method, url, payload] of targets) {
      for (const contentType of ['text/plain', 'text/plain; charset=utf-8', 'application/xml']) {
        const res = await app.inject({ method: method as 'POST', url, headers: { ...keyHeaders(org, org.keys.admin), 'content-type': contentType }, payload });
        assert.equal(res.statusCode, 415, `${contentType} ${url}: ${res.body}`);
        const body = res.json();
        assert.equal(body.code, 'unsupported_media_type');
        assert.equal(typeof body.detail, 'string');
        assert.deepEqual(Object.keys(body).sort(), ['code', 'detail']);
      }
    }
    assert.equal((await app.inject({ url: `/api/campaigns/${campaign.campaign_id}`, headers: keyHeaders(org, org.keys.admin) })).json().data.progress.total, 0);
  });

  test('a session cookie that is not valid percent-encoding is no session: refresh 401, sign-out 200, never a 500', async () => {
    const { app } = await testEnv();
    for (const cookie of ['switchboard_session=%ZZ', 'switchboard_session=%E0%A4%A', 'other=1; switchboard_session=%']) {
      const refresh = await app.inject({ method: 'POST', url: '/api/auth/session/refresh', headers: { cookie } });
      assert.equal(refresh.statusCode, 401, refresh.body);
      assert.equal(refresh.json().code, 'session_invalid');
      const signOut = await app.inject({ method: 'DELETE', url: '/api/auth/session', headers: { cookie } });
      assert.equal(signOut.statusCode, 200, signOut.body);
    }
  });
  test('validation errors are capped: 200,000 bad tool_ids answer one maxItems error, 100 bad ones at most 20 entries', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const huge = await app.inject({ method: 'POST', url: '/api/agents', headers: keyHeaders(org, org.keys.admin), payload: { agent_name: 'x', tool_ids: new Array(200_000).fill(1) } });
    assert.equal(huge.statusCode, 400);
    assert.ok(huge.body.length < 2_000, `${huge.body.length} bytes`);
    // The agent schema allows at most 100 tool ids (the documented maxItems).
    assert.deepEqual(huge.json().errors.map((e: { path: string }) => e.path), ['body.tool_ids']);
    assert.match(huge.json().errors[0].message, /100/);
    const many = await app.inject({
      method: 'POST', url: '/api/agents', headers: keyHeaders(org, org.keys.admin),
      payload: { agent_name: 'x', tool_ids: Array.from({ length: 100 }, (_, i) => `bad_${i}`) },
    });
    assert.equal(many.statusCode, 400);
    assert.equal(many.json().errors.length, 20);
    assert.ok(many.json().errors.every((e: { path: string }) => /^body\.tool_ids\.\d+$/.test(e.path)), many.body);
    // Fewer failures than the cap are all reported.
    const few = await app.inject({ method: 'POST', url: '/api/agents', headers: keyHeaders(org, org.keys.admin), payload: { agent_name: '', temperature: 'hot', unknown_field: 1 } });
    assert.deepEqual(few.json().errors.map((e: { path: string }) => e.path).sort(), ['body.agent_name', 'body.temperature', 'body.unknown_field']);
  });

  test('JSON bodies are taken as sent (no coercion); query strings keep theirs', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const headers = keyHeaders(org, org.keys.admin);
    for (const [body, field] of [
      [{ agent_name: ['x'] }, 'body.agent_name'],
      [{ agent_name: 123 }, 'body.agent_name'],
      [{ agent_name: true }, 'body.agent_name'],
      [{ agent_name: 'x', recording_enabled: 'true' }, 'body.recording_enabled'],
      [{ agent_name: 'x', recording_enabled: 1 }, 'body.recording_enabled'],
      [{ agent_name: 'x', temperature: '0.5' }, 'body.temperature'],
      [{ agent_name: 'x', tool_ids: 'tool_0123456789ab' }, 'body.tool_ids'],
    ] as const) {
      const res = await app.inject({ method: 'POST', url: '/api/agents', headers, payload: body });
      assert.equal(res.statusCode, 400, `${JSON.stringify(body)}: ${res.body}`);
      assert.equal(res.json().code, 'validation_error');
      assert.ok(res.json().errors.some((e: { path: string }) => e.path === field), res.body);
    }
    const agents = await app.inject({ url: '/api/agents?page_size=5', headers });
    assert.equal(agents.statusCode, 200, agents.body);
    assert.equal(agents.json().pagination.total_count, 0);

    const integration = await app.inject({
      method: 'POST', url: '/api/integrations', headers,
      payload: { name: 'Carrier', provider: 'carrier_a', category: 'telephony', credentials: { account_sid: 'AC0123456789abcdef0123456789abcdef', auth_token: 'token' } },
    });
    assert.equal(integration.statusCode, 200, integration.body);
    const id = integration.json().data.integration_id;
    const renamed = await app.inject({ method: 'PATCH', url: `/api/integrations/${id}`, headers, payload: { name: 42 } });
    assert.equal(renamed.statusCode, 400, renamed.body);
    assert.ok(renamed.json().errors.some((e: { path: string }) => e.path === 'body.name'), renamed.body);
    assert.equal((await app.inject({ url: `/api/integrations/${id}`, headers })).json().data.name, 'Carrier');
  });
});
