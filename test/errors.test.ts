import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { toAppError } from '../src/core/error-handler.ts';
import { Errors } from '../src/core/errors.ts';
import { decodeCursor, encodeCursor } from '../src/core/cursor.ts';
import { testEnv } from './helpers/env.ts';
import { asRole, createOrg } from './helpers/fixtures.ts';

describe('error bodies', () => {
  test('unknown route → 404 {detail, code}', async () => {
    const { app } = await testEnv();
    const res = await app.inject({ url: '/api/does-not-exist' });
    assert.equal(res.statusCode, 404);
    assert.deepEqual(Object.keys(res.json()).sort(), ['code', 'detail']);
    assert.equal(res.json().code, 'route_not_found');
  });

  test('malformed JSON → 400 invalid_json; wrong content type → 415', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const bad = await app.inject({
      method: 'POST', url: '/api/api-keys', headers: asRole(org, 'admin', { 'content-type': 'application/json' }), payload: '{"name":',
    });
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json().code, 'invalid_json');
    const xml = await app.inject({
      method: 'POST', url: '/api/api-keys', headers: asRole(org, 'admin', { 'content-type': 'application/xml' }), payload: '<a/>',
    });
    assert.equal(xml.statusCode, 415);
    assert.equal(xml.json().code, 'unsupported_media_type');
  });

  test('missing required fields are listed one by one', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const res = await app.inject({ method: 'POST', url: '/api/api-keys', headers: asRole(org, 'admin'), payload: {} });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json().errors.map((e: any) => e.path).sort(), ['body.name', 'body.role']);
  });

  test('unexpected errors become 500 internal_error without internals', () => {
    const err = toAppError(new Error('connection to 10.0.0.5 failed: password authentication failed'));
    assert.equal(err.status, 500);
    assert.equal(err.code, 'internal_error');
    assert.equal(err.detail, 'Internal server error');
    assert.equal(toAppError(Errors.notFound('Agent')).status, 404);
  });

  test('every response carries a request id, and a given one is echoed', async () => {
    const { app } = await testEnv();
    const res = await app.inject({ url: '/api/health', headers: { 'x-request-id': 'trace-123' } });
    assert.equal(res.headers['x-request-id'], 'trace-123');
    const generated = await app.inject({ url: '/api/health' });
    assert.match(String(generated.headers['x-request-id']), /^req_[a-f0-9]{8}[0-9a-z]{6,}$/);
  });

  test('cursors are opaque base64url and reject tampering', () => {
    const cursor = encodeCursor({ value: '2026-01-01T00:00:00.000Z', id: 'agent_0123456789ab' });
    assert.match(cursor, /^[A-Za-z0-9_-]+$/);
    assert.deepEqual(decodeCursor(cursor), { value: '2026-01-01T00:00:00.000Z', id: 'agent_0123456789ab' });
    assert.throws(() => decodeCursor('e30'), (e: any) => e.code === 'invalid_cursor');
    assert.throws(() => decodeCursor('!!!'), (e: any) => e.code === 'invalid_cursor');
  });
});

describe('service routes', () => {
  test('health and readiness', async () => {
    const { app } = await testEnv();
    assert.deepEqual((await app.inject({ url: '/api/health' })).json(), { status: 'ok' });
    assert.deepEqual((await app.inject({ url: '/api/ready' })).json(), { status: 'ready' });
  });

  test('the OpenAPI document lists every route with its security and error shapes; the docs page renders it', async () => {
    const { app } = await testEnv();
    const doc = (await app.inject({ url: '/api/openapi.json' })).json();
    assert.equal(doc.openapi, '3.1.0');
    assert.ok(doc.components.securitySchemes.ApiKeyAuth);
    assert.ok(doc.components.securitySchemes.BearerAuth);
    const routes = app.printRoutes({ commonPrefix: false });
    for (const [path, method] of [
      ['/api/api-keys', 'post'], ['/api/api-keys', 'get'], ['/api/api-keys/{key_id}', 'get'], ['/api/api-keys/{key_id}', 'delete'],
      ['/api/auth/organizations', 'post'], ['/api/auth/me', 'get'], ['/api/auth/organizations/members', 'get'],
      ['/api/health', 'get'], ['/api/ready', 'get'],
      ['/api/agents', 'post'], ['/api/agents/{agent_id}', 'patch'], ['/api/tools/{tool_id}', 'patch'], ['/api/tools/{tool_id}/test', 'post'],
      ['/api/integrations/{integration_id}/validate', 'post'], ['/api/phone-numbers', 'post'], ['/api/phone-numbers', 'get'],
      ['/api/phone-numbers/{phone_number_id}', 'get'], ['/api/phone-numbers/{phone_number_id}', 'patch'], ['/api/phone-numbers/{phone_number_id}', 'delete'],
      ['/api/calls', 'post'], ['/api/calls', 'get'], ['/api/calls/{call_sid}', 'get'], ['/api/calls/{call_sid}', 'patch'],
      ['/api/calls/{call_sid}/recording', 'put'], ['/api/calls/{call_sid}/recording/stream', 'get'], ['/api/calls/{call_sid}/recording/download', 'get'],
      ['/api/recordings/{call_sid}', 'get'], ['/api/analytics/calls/daily', 'get'],
      ['/api/auth/organizations/invitations', 'get'], ['/api/auth/organizations/invitations', 'post'],
      ['/api/auth/organizations/invitations/{invite_id}', 'delete'], ['/api/auth/invitations/{invite_id}/accept', 'post'],
      ['/api/auth/organizations/members/{user_id}', 'patch'], ['/api/auth/organizations/members/{user_id}', 'delete'],
      ['/api/billing/credits', 'get'], ['/api/billing/transactions', 'get'], ['/api/billing/credits/purchase', 'post'], ['/api/billing/webhook', 'post'],
    ] as const) {
      assert.ok(doc.paths[path]?.[method], `${method} ${path} documented`);
    }
    // Public: the service routes; signed recording links and provider webhooks (the signature is the
    // credential); the local provider's hosted checkout pages (reached by their link, like a provider's).
    const PUBLIC = [
      '/api/health', '/api/ready', '/api/recordings/{call_sid}', '/api/exports/{export_id}', '/api/billing/webhook',
      '/api/telephony/carrier_a/voice', '/api/telephony/carrier_a/status',
      '/api/billing/checkout/{session_id}', '/api/billing/checkout/{session_id}/pay', '/api/billing/checkout/{session_id}/cancel', '/api/billing/checkout/return',
      // Signing in: the e-mail link, then the session cookie, are the credentials.
      '/api/auth/sign-in-links', '/api/auth/session', '/api/auth/session/refresh',
    ];
    for (const [path, operations] of Object.entries<Record<string, any>>(doc.paths)) {
      for (const [method, op] of Object.entries(operations)) {
        assert.ok(op.responses['200'], `${method} ${path} has its 200`);
        if (PUBLIC.includes(path)) continue;
        assert.ok(op.security?.length === 2, `${method} ${path} names its credentials`);
        assert.ok(op.responses['401'], `${method} ${path} documents 401`);
      }
    }
    assert.ok(routes.includes('/api/api-keys'));
    const page = await app.inject({ url: '/api/docs' });
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers['content-type']), /text\/html/);
    // The reference is Scalar, served from here: its script, and ours to start it (no inline script).
    assert.ok(!/<script>[^<]/.test(page.body), 'no inline script');
    for (const src of [...page.body.matchAll(/<script src="([^"]+)"/g)].map((m) => m[1]!)) {
      const script = await app.inject({ url: src });
      assert.equal(script.statusCode, 200, src);
      assert.match(String(script.headers['content-type']), /javascript/);
    }
  });
});
