import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, test } from 'node:test';
import { PERMISSIONS } from '../src/core/permissions.ts';
import { MATRIX_FILES, MATRIX_OPERATIONS } from './helpers/auth-matrix.ts';
import { PERMISSION_TABLE } from './helpers/permission-table.ts';
import { testEnv } from './helpers/env.ts';

/** Operations anyone may call: liveness, a signed recording link, the payment provider's webhook and the checkout pages. */
const PUBLIC_OPERATIONS = [
  'GET /api/health', 'GET /api/ready', 'GET /api/recordings/{call_sid}', 'POST /api/billing/webhook',
  'GET /api/billing/checkout/{session_id}', 'POST /api/billing/checkout/{session_id}/pay',
  'POST /api/billing/checkout/{session_id}/cancel', 'GET /api/billing/checkout/return',
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
  test('src/core/permissions.ts grants exactly what the contract (the literal table of the tests) does, entry by entry', () => {
    const sorted = (roles: readonly string[]) => [...roles].sort();
    for (const [permission, roles] of Object.entries(PERMISSION_TABLE)) {
      const granted = PERMISSIONS[permission];
      assert.ok(granted, `${permission} is missing from src/core/permissions.ts`);
      assert.deepEqual(sorted(granted), sorted(roles), permission);
    }
    for (const permission of Object.keys(PERMISSIONS)) {
      assert.ok(PERMISSION_TABLE[permission], `${permission} is in src/core/permissions.ts but not in the contract's table`);
    }
  });

  test('the OpenAPI document asks a credential of every operation but the public ones, and the organization header of all others', async () => {
    const all = await operations();
    const open = all.filter(({ op }) => !op.security?.length).map(({ name }) => name);
    assert.deepEqual(open.sort(), [...PUBLIC_OPERATIONS].sort());
    const withoutOrganization = all
      .filter(({ name, op }) => op.security?.length && !op.parameters?.some((p) => p.in === 'header' && p.name === 'x-organization-id'))
      .map(({ name }) => name);
    assert.deepEqual(withoutOrganization.sort(), [...CREDENTIAL_ONLY_OPERATIONS].sort());
  });

  test('every operation that acts in an organization runs the auth matrix, and every matrix is an operation', async (t) => {
    // Test files register their matrices when they load, so this needs all of them in the run.
    const matrixFiles = fs.readdirSync(import.meta.dirname).filter((file) =>
      file.endsWith('.test.ts') && fs.readFileSync(`${import.meta.dirname}/${file}`, 'utf8').match(/^\s*runAuthMatrix\(/m));
    const notLoaded = matrixFiles.filter((file) => !MATRIX_FILES.has(file));
    if (notLoaded.length > 0) return t.skip(`needs the whole suite (${notLoaded.length} matrix files not in this run)`);
    const names = (await operations()).map(({ name }) => name);
    const organizationScoped = names.filter((name) => !PUBLIC_OPERATIONS.includes(name) && !CREDENTIAL_ONLY_OPERATIONS.includes(name));
    assert.deepEqual(organizationScoped.filter((name) => !MATRIX_OPERATIONS.has(name)), [], 'operations without a matrix');
    assert.deepEqual([...MATRIX_OPERATIONS].filter((name) => !organizationScoped.includes(name)), [], 'matrices of no organization-scoped operation');
  });
});
