import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, test } from 'node:test';
import { MATRIX_FILES, MATRIX_OPERATIONS, MATRIX_PERMISSIONS } from './helpers/auth-matrix.ts';
import { PERMISSION_TABLE } from './helpers/permission-table.ts';
import { testEnv } from './helpers/env.ts';

/** Operations anyone may call: liveness, a signed recording or export link, the payment provider's webhook, the checkout pages and signing in. */
const PUBLIC_OPERATIONS = [
  'GET /api/health', 'GET /api/ready', 'GET /api/recordings/{call_sid}', 'GET /api/exports/{export_id}', 'POST /api/billing/webhook', 'POST /api/telephony/carrier_a/voice', 'POST /api/telephony/carrier_a/status',
  'GET /api/billing/checkout/{session_id}', 'POST /api/billing/checkout/{session_id}/pay',
  'POST /api/billing/checkout/{session_id}/cancel', 'GET /api/billing/checkout/return',
  // Signing in: asking for an e-mail link, redeeming it, refreshing and ending the session of the cookie.
  'POST /api/auth/sign-in-links', 'POST /api/auth/session', 'POST /api/auth/session/refresh', 'DELETE /api/auth/session',
];
/** Operations of a user or key that act in no organization (decisions.md §3: create one, me, accept an invitation). */
const CREDENTIAL_ONLY_OPERATIONS = ['POST /api/auth/organizations', 'GET /api/auth/me', 'POST /api/auth/invitations/{invite_id}/accept'];

interface OpenApiOperation {
  security?: unknown[];
  parameters?: Array<{ in: string; name: string }>;
}

async function operations(): Promise<Array<{ name: string; op: OpenApiOperation }>> {
  const { app } = await testEnv();
  const doc = app.swagger() as { paths: Record<string, Record<string, OpenApiOperation>> };
  return Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({ name: `${method.toUpperCase()} ${path}`, op })));
}

describe('the permission table', () => {
  test('the OpenAPI document asks a credential of every operation but the public ones, and the organization header of all others', async () => {
    const all = await operations();
    const open = all.filter(({ op }) => !op.security?.length).map(({ name }) => name);
    assert.deepEqual(open.sort(), [...PUBLIC_OPERATIONS].sort());
    const withoutOrganization = all
      .filter(({ name, op }) => op.security?.length && !op.parameters?.some((p) => p.in === 'header' && p.name === 'x-organization-id'))
      .map(({ name }) => name);
    assert.deepEqual(withoutOrganization.sort(), [...CREDENTIAL_ONLY_OPERATIONS].sort());
  });

  test('every operation that acts in an organization runs the auth matrix, every matrix is an operation, and every row of the table is checked by one', async (t) => {
    // Test files register their matrices when they load, so this needs all of them in the run.
    const matrixFiles = fs.readdirSync(import.meta.dirname).filter((file) =>
      file.endsWith('.test.ts') && fs.readFileSync(`${import.meta.dirname}/${file}`, 'utf8').match(/^\s*runAuthMatrix\(/m));
    const notLoaded = matrixFiles.filter((file) => !MATRIX_FILES.has(file));
    // npm test deals these files to one shard (scripts/run-tests.ts); there a missing one is a failure.
    if (notLoaded.length > 0 && process.env.TEST_WHOLE_RUN === '1') assert.fail(`matrix files not in this shard: ${notLoaded.join(', ')}`);
    if (notLoaded.length > 0) return t.skip(`needs the whole suite (${notLoaded.length} matrix files not in this run)`);
    const names = (await operations()).map(({ name }) => name);
    const organizationScoped = names.filter((name) => !PUBLIC_OPERATIONS.includes(name) && !CREDENTIAL_ONLY_OPERATIONS.includes(name));
    assert.deepEqual(organizationScoped.filter((name) => !MATRIX_OPERATIONS.has(name)), [], 'operations without a matrix');
    assert.deepEqual([...MATRIX_OPERATIONS].filter((name) => !organizationScoped.includes(name)), [], 'matrices of no organization-scoped operation');
    // Each row of the contract's table is checked through at least one route, role by role, over HTTP.
    assert.deepEqual(Object.keys(PERMISSION_TABLE).filter((permission) => !MATRIX_PERMISSIONS.has(permission)), [], 'permissions no route checks');
  });
});
