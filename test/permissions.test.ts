import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { PERMISSIONS } from '../src/core/permissions.ts';
import { MATRIX_OPERATIONS } from './helpers/auth-matrix.ts';
import { PERMISSION_TABLE } from './helpers/permission-table.ts';
import { testEnv } from './helpers/env.ts';

describe('the permission table', () => {
  test('src/core/permissions.ts grants exactly what the contract (the literal table of the tests) does, entry by entry', () => {
    const sorted = (roles: readonly string[]) => [...roles].sort();
    for (const [permission, roles] of Object.entries(PERMISSION_TABLE)) {
      assert.ok(PERMISSIONS[permission], `${permission} is missing from src/core/permissions.ts`);
      assert.deepEqual(sorted(PERMISSIONS[permission]!), sorted(roles), permission);
    }
    for (const permission of Object.keys(PERMISSIONS)) {
      assert.ok(PERMISSION_TABLE[permission], `${permission} is in src/core/permissions.ts but not in the contract's table`);
    }
  });

  test('every operation that acts in an organization runs the auth matrix', async (t) => {
    // The test files register their matrices when they load: meaningful only in a run of the whole suite.
    if (MATRIX_OPERATIONS.size === 0) return t.skip('run with the whole suite');
    const { app } = await testEnv();
    const doc = app.swagger() as { paths: Record<string, Record<string, { parameters?: Array<{ in: string; name: string }> }>> };
    const missing: string[] = [];
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(operations)) {
        const organizationScoped = op.parameters?.some((p) => p.in === 'header' && p.name === 'x-organization-id');
        if (organizationScoped && !MATRIX_OPERATIONS.has(`${method.toUpperCase()} ${path}`)) missing.push(`${method.toUpperCase()} ${path}`);
      }
    }
    assert.deepEqual(missing, []);
    assert.ok(MATRIX_OPERATIONS.size >= 45, `${MATRIX_OPERATIONS.size} operations`);
  });
});
