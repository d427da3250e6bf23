import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildTestApp, testConfig, testEnv } from './helpers/env.ts';
import { createOrg, keyHeaders, type TestOrg } from './helpers/fixtures.ts';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

function assertLimitHeaders(res: { headers: Record<string, unknown> }, limit: number, remaining: number) {
  assert.equal(res.headers['ratelimit-limit'], String(limit));
  assert.equal(res.headers['ratelimit-remaining'], String(remaining));
  const reset = Number(res.headers['ratelimit-reset']);
  assert.ok(reset >= 1 && reset <= 60, `RateLimit-Reset ${reset}`);
}

function assertRefused(res: { statusCode: number; headers: Record<string, unknown>; json(): any }) {
  assert.equal(res.statusCode, 429);
  assert.equal(res.json().code, 'rate_limited');
  assert.equal(typeof res.json().detail, 'string');
  const retryAfter = Number(res.headers['retry-after']);
  assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
}

describe('rate limits in one process (in-memory counts)', () => {
  let app: FastifyInstance;
  let org: TestOrg;
  before(async () => {
    const { tmpDir } = await testEnv();
    app = await buildTestApp(testConfig(tmpDir, { RATE_LIMIT_PER_MINUTE: '5', RATE_LIMIT_PUBLIC_PER_MINUTE: '3' }));
    org = await createOrg();
  });
  after(() => app?.close());

  test('a key gets its limit a minute, each answer says how much is left, the next is 429 with Retry-After; another key is unaffected', async () => {
    for (let i = 1; i <= 5; i++) {
      const res = await app.inject({ url: '/api/agents', headers: keyHeaders(org, org.keys.user) });
      assert.equal(res.statusCode, 200);
      assertLimitHeaders(res, 5, 5 - i);
    }
    const refused = await app.inject({ url: '/api/agents', headers: keyHeaders(org, org.keys.user) });
    assertRefused(refused);
    assertLimitHeaders(refused, 5, 0);
    const other = await app.inject({ url: '/api/agents', headers: keyHeaders(org, org.keys.agent_manager) });
    assert.equal(other.statusCode, 200);
    assertLimitHeaders(other, 5, 4);
  });

  test('anonymous traffic counts per client address: public routes and refused credentials alike', async () => {
    // A fresh address for this test: inject lets the test choose it.
    const from = { remoteAddress: '198.51.100.7' };
    const health = await app.inject({ url: '/api/health', ...from });
    assert.equal(health.statusCode, 200);
    assertLimitHeaders(health, 3, 2);
    for (let i = 0; i < 2; i++) {
      const bad = await app.inject({ url: '/api/agents', headers: { 'x-api-key': `sk_${'B'.repeat(39)}${i}`, 'x-organization-id': org.orgId }, ...from });
      assert.equal(bad.statusCode, 401, 'each bad key is refused for itself');
    }
    assertRefused(await app.inject({ url: '/api/agents', headers: { 'x-api-key': `sk_${'C'.repeat(40)}`, 'x-organization-id': org.orgId }, ...from }));
    assertRefused(await app.inject({ url: '/api/health', ...from }));
    assert.equal((await app.inject({ url: '/api/health', remoteAddress: '198.51.100.8' })).statusCode, 200, 'another address has its own count');
  });
});

describe('rate limits shared by several processes (Redis)', () => {
  let first: FastifyInstance;
  let second: FastifyInstance;
  let org: TestOrg;
  before(async () => {
    const { tmpDir } = await testEnv();
    const config = testConfig(tmpDir, { RATE_LIMIT_PER_MINUTE: '6', REDIS_URL });
    first = await buildTestApp(config);
    second = await buildTestApp(config);
    org = await createOrg(); // fresh keys: their counts start at zero in the shared Redis
  });
  after(async () => {
    await first?.close();
    await second?.close();
  });

  test("two apps on one Redis share a key's count", async () => {
    for (let i = 0; i < 6; i++) {
      const app = i % 2 === 0 ? first : second;
      const res = await app.inject({ url: '/api/agents', headers: keyHeaders(org, org.keys.admin) });
      assert.equal(res.statusCode, 200, `request ${i + 1}`);
      assertLimitHeaders(res, 6, 5 - i);
    }
    assertRefused(await first.inject({ url: '/api/agents', headers: keyHeaders(org, org.keys.admin) }));
    assertRefused(await second.inject({ url: '/api/agents', headers: keyHeaders(org, org.keys.admin) }));
  });
});
