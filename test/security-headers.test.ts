import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { buildTestApp, testConfig, testEnv } from './helpers/env.ts';
import { asRole, createAgent, createOrg } from './helpers/fixtures.ts';
import { grantCredits } from './helpers/calls.ts';

// Helmet 8's documented defaults (helmetjs.github.io), written out: every answer carries them.
const EXPECTED: Record<string, string> = {
  'content-security-policy':
    "default-src 'self';base-uri 'self';font-src 'self' https: data:;form-action 'self';frame-ancestors 'self';img-src 'self' data:;object-src 'none';script-src 'self';script-src-attr 'none';style-src 'self' https: 'unsafe-inline';upgrade-insecure-requests",
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'origin-agent-cluster': '?1',
  'referrer-policy': 'no-referrer',
  'strict-transport-security': 'max-age=31536000; includeSubDomains',
  'x-content-type-options': 'nosniff',
  'x-dns-prefetch-control': 'off',
  'x-download-options': 'noopen',
  'x-frame-options': 'SAMEORIGIN',
  'x-permitted-cross-domain-policies': 'none',
  'x-xss-protection': '0',
};

describe('security headers', () => {
  test('a success, a client error and an unknown route all carry the same headers, and no X-Powered-By', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const answers = [
      await app.inject({ url: '/api/agents', headers: asRole(org, 'user') }),
      await app.inject({ url: '/api/agents', headers: { 'x-organization-id': org.orgId } }),
      await app.inject({ url: '/api/no-such-route' }),
      await app.inject({ url: '/api/health' }),
    ];
    for (const res of answers) {
      for (const [name, value] of Object.entries(EXPECTED)) assert.equal(res.headers[name], value, `${res.statusCode} ${name}`);
      assert.equal(res.headers['x-powered-by'], undefined);
    }
  });

  test('runtimes on another host (RUNTIME_STREAM_URL): preview sessions point there, and the CSP lets the console connect to it', async () => {
    const { tmpDir } = await testEnv();
    const app = await buildTestApp(testConfig(tmpDir, { RUNTIME_STREAM_URL: 'wss://runtime.example.test/api/runtime/carrier_a/stream' }));
    try {
      const res = await app.inject({ url: '/api/health' });
      assert.equal(res.headers['content-security-policy'], `${EXPECTED['content-security-policy']};connect-src 'self' wss://runtime.example.test`);
      const org = await createOrg();
      await grantCredits(org.orgId, 5);
      const agent = await createAgent(org);
      const session = await app.inject({ method: 'POST', url: `/api/agents/${agent.agent_id}/preview-sessions`, headers: asRole(org, 'admin') });
      assert.equal(session.statusCode, 200, session.body);
      assert.match(session.json().data.websocket_url, /^wss:\/\/runtime\.example\.test\/api\/runtime\/preview\?token=[\w.%-]+$/);
    } finally {
      await app.close();
    }
  });
});
