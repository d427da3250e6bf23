import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { testEnv } from './helpers/env.ts';
import { asRole, createOrg } from './helpers/fixtures.ts';

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
});
