import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { PERMISSION_TABLE, ROLES } from './permission-table.ts';
import { ApiKeyRepository } from '../../src/modules/api-keys/repository.ts';
import { issueApiKey } from '../../src/modules/api-keys/service.ts';
import { testEnv } from './env.ts';
import { createOrg, keyHeaders, userToken, type TestOrg } from './fixtures.ts';

type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

export interface MatrixRoute {
  method: Method;
  /** The operation as the OpenAPI document names it, e.g. `/api/agents/{agent_id}`. */
  route: string;
  /** The route's path for a record of `org` (called afresh for every request, so deletes get their own). */
  path: (org: TestOrg) => string | Promise<string>;
  body?: (org: TestOrg) => unknown;
  headers?: Record<string, string>;
  /** The permission the route requires; the matrix checks each role against the table. */
  permission: string;
  /** A record of another organization named from this one: 404, or 403 where the specification says so. */
  foreignStatus?: 403 | 404;
}

/**
 * Writes that change nothing an organization owns, so extensions.md §6 asks no audit entry of them:
 * searches and test sends (an integration's validation records the status it sets, so it is checked). Every other POST, PATCH, PUT and DELETE that succeeds in the matrix
 * must have written an entry with its request id.
 */
const NOT_CHANGES = new Set([
  'POST /api/knowledge-base/search',
  'POST /api/tools/{tool_id}/test',
  'POST /api/webhooks/{webhook_id}/test',
]);

async function assertAudited(route: MatrixRoute, org: TestOrg, res: { statusCode: number; headers: Record<string, unknown> }) {
  if (route.method === 'GET' || res.statusCode >= 300 || NOT_CHANGES.has(`${route.method} ${route.route}`)) return;
  const { database } = await testEnv();
  const { rows } = await database.pool.query(
    'SELECT count(*)::int AS n FROM audit_logs WHERE client_id = $1 AND request_id = $2', [org.orgId, String(res.headers['x-request-id'])]);
  assert.ok(rows[0].n >= 1, `${route.method} ${route.route} answered ${res.statusCode} but wrote no audit entry`);
}

async function send(route: MatrixRoute, org: TestOrg, headers: Record<string, string>, path?: string) {
  const { app } = await testEnv();
  const body = route.body?.(org);
  const url = path ?? (await route.path(org));
  // The registry counts `route.route` as covered: the request must really be that operation.
  const operation = new RegExp(`^${route.route.replace(/\{[^}]+\}/g, '[^/?]+')}(\\?.*)?$`);
  assert.match(url, operation, `the matrix of ${route.route} sent ${url}`);
  return app.inject({
    method: route.method,
    url,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...route.headers, ...headers },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
}

function expectError(res: { statusCode: number; json(): any }, status: number, code: string) {
  assert.equal(res.statusCode, status, `expected ${status} ${code}, got ${res.statusCode}: ${JSON.stringify(res.json())}`);
  const body = res.json();
  assert.equal(body.code, code);
  assert.equal(typeof body.detail, 'string');
}

/** Every operation a matrix was defined for (files register theirs when they load, before any test runs). */
export const MATRIX_OPERATIONS = new Set<string>();
/** The test files those registrations came from, so a run of some files only can tell it is partial. */
export const MATRIX_FILES = new Set<string>();
/** The permissions the registered matrices check, over HTTP, against the table. */
export const MATRIX_PERMISSIONS = new Set<string>();

/**
 * The shared authentication and tenancy checks every organization-scoped endpoint runs:
 * no credential, bad key, revoked and expired keys, bad token, missing and foreign
 * X-Organization-Id, the role table, and another organization's record.
 */
export function runAuthMatrix(route: MatrixRoute): void {
  MATRIX_OPERATIONS.add(`${route.method} ${route.route}`);
  MATRIX_PERMISSIONS.add(route.permission);
  const caller = new Error().stack?.match(/([\w-]+\.test\.ts)/)?.[1];
  if (caller) MATRIX_FILES.add(caller);
  const allowed = PERMISSION_TABLE[route.permission];
  if (!allowed) throw new Error(`${route.permission} is not in the permission table of the tests`);
  describe(`auth matrix: ${route.method} ${route.route} (${route.permission})`, () => {
    let org: TestOrg;
    let other: TestOrg;
    before(async () => {
      org = await createOrg();
      other = await createOrg();
    });

    test('no credential → 401', async () => {
      expectError(await send(route, org, { 'x-organization-id': org.orgId }), 401, 'unauthenticated');
    });

    test('unknown or malformed API key → 401', async () => {
      expectError(await send(route, org, keyHeaders(org, `sk_${'A'.repeat(40)}`)), 401, 'invalid_api_key');
      expectError(await send(route, org, keyHeaders(org, 'not-a-key')), 401, 'invalid_api_key');
    });

    test('revoked and expired keys → 401', async () => {
      const { database } = await testEnv();
      const revoked = await issueApiKey(database.db, org.orgId, { userId: org.userId, name: 'revoked', role: 'admin' });
      await new ApiKeyRepository(database.db).revoke(org.orgId, revoked.view.key_id);
      expectError(await send(route, org, keyHeaders(org, revoked.key)), 401, 'invalid_api_key');
      const expired = await issueApiKey(database.db, org.orgId, {
        userId: org.userId, name: 'expired', role: 'admin', expiresAt: new Date(Date.now() - 1000),
      });
      expectError(await send(route, org, keyHeaders(org, expired.key)), 401, 'invalid_api_key');
    });

    test('bad bearer token → 401', async () => {
      const forged = await userToken({ sub: 'someone' }, { secret: 'not-the-secret-of-this-deployment-000000' });
      expectError(await send(route, org, { authorization: `Bearer ${forged}`, 'x-organization-id': org.orgId }), 401, 'invalid_token');
    });

    test('missing X-Organization-Id → 400', async () => {
      expectError(await send(route, org, { 'x-api-key': org.keys.admin }), 400, 'organization_required');
    });

    test("another organization's X-Organization-Id → 403", async () => {
      expectError(await send(route, org, { 'x-api-key': other.keys.admin, 'x-organization-id': org.orgId }), 403, 'organization_forbidden');
      const outsider = await userToken({ sub: `outsider-${org.orgId}` });
      expectError(await send(route, org, { authorization: `Bearer ${outsider}`, 'x-organization-id': org.orgId }), 403, 'organization_forbidden');
    });

    test('roles follow the permission table', async () => {
      for (const role of ROLES) {
        const res = await send(route, org, keyHeaders(org, org.keys[role]));
        if (allowed.includes(role)) {
          const json = String(res.headers['content-type']).startsWith('application/json');
          assert.ok(res.statusCode < 500 && (!json || res.json()?.code !== 'permission_denied'), `${role} should pass: ${res.statusCode}`);
          assert.notEqual(res.statusCode, 401);
          await assertAudited(route, org, res);
        } else {
          expectError(res, 403, 'permission_denied');
        }
      }
    });

    if (route.foreignStatus) {
      test(`another organization's record → ${route.foreignStatus}`, async () => {
          const foreignPath = await route.path(other);
        const res = await send(route, org, keyHeaders(org, org.keys.admin), foreignPath);
        assert.equal(res.statusCode, route.foreignStatus, res.body);
        assert.equal(typeof res.json().detail, 'string');
      });
    }
  });
}
