import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { issueApiKey } from '../src/modules/api-keys/service.ts';
import { runAuthMatrix } from './helpers/auth-matrix.ts';
import { testEnv } from './helpers/env.ts';
import { asRole, createOrg, keyHeaders, type TestOrg } from './helpers/fixtures.ts';

async function newKey(org: TestOrg, role: 'admin' | 'agent_manager' | 'user' = 'user') {
  const { database } = await testEnv();
  return issueApiKey(database.db, org.orgId, { userId: org.userId, name: `k-${role}`, role });
}

runAuthMatrix({ method: 'POST', route: '/api/api-keys', path: () => '/api/api-keys', body: () => ({ name: 'm', role: 'user' }), permission: 'api_keys:create' });
runAuthMatrix({ method: 'GET', route: '/api/api-keys', path: () => '/api/api-keys', permission: 'api_keys:read' });
runAuthMatrix({
  method: 'GET', route: '/api/api-keys/{key_id}', permission: 'api_keys:read', foreignStatus: 404,
  path: async (org) => `/api/api-keys/${(await newKey(org)).view.key_id}`,
});
runAuthMatrix({
  method: 'DELETE', route: '/api/api-keys/{key_id}', permission: 'api_keys:delete', foreignStatus: 404,
  path: async (org) => `/api/api-keys/${(await newKey(org)).view.key_id}`,
});

describe('API keys', () => {
  test('create returns the full key once; only its SHA-256 is stored; list and get never show it', async () => {
    const { app, database } = await testEnv();
    const org = await createOrg();
    const created = await app.inject({
      method: 'POST', url: '/api/api-keys', headers: asRole(org, 'admin'),
      payload: { name: 'deploy', role: 'agent_manager' },
    });
    assert.equal(created.statusCode, 200);
    const body = created.json();
    assert.equal(body.success, true);
    assert.match(body.data.key_id, /^apikey_[a-f0-9]{12}$/);
    assert.match(body.data.key, /^sk_[0-9A-Za-z]{40}$/);
    assert.equal(body.data.prefix, body.data.key.slice(0, 12));
    assert.equal(body.data.client_id, org.orgId);
    assert.equal(body.data.user_id, org.userId);
    assert.equal(body.data.status, 'active');
    assert.match(body.data.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    const { rows } = await database.pool.query('SELECT * FROM api_keys WHERE id = $1', [body.data.key_id]);
    // decisions.md §2: only a SHA-256 hash is stored (computed here, not by the code under test).
    assert.equal(rows[0].key_hash, createHash('sha256').update(body.data.key).digest('hex'));
    assert.ok(!JSON.stringify(rows[0]).includes(body.data.key), 'the key itself is not stored');

    const list = await app.inject({ url: '/api/api-keys', headers: asRole(org, 'user') });
    assert.ok(!list.body.includes(body.data.key));
    assert.ok(list.json().data.every((k: any) => k.key === undefined));
    const one = await app.inject({ url: `/api/api-keys/${body.data.key_id}`, headers: asRole(org, 'user') });
    assert.equal(one.json().data.name, 'deploy');
    assert.equal(one.json().data.key, undefined);

    const works = await app.inject({ url: '/api/api-keys', headers: keyHeaders(org, body.data.key) });
    assert.equal(works.statusCode, 200);
  });

  test('nobody creates a key above their own role', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const res = await app.inject({
      method: 'POST', url: '/api/api-keys', headers: asRole(org, 'agent_manager'), payload: { name: 'x', role: 'admin' },
    });
    assert.equal(res.statusCode, 403);
    assert.equal(res.json().code, 'role_too_high');
    const ok = await app.inject({
      method: 'POST', url: '/api/api-keys', headers: asRole(org, 'agent_manager'), payload: { name: 'x', role: 'agent_manager' },
    });
    assert.equal(ok.statusCode, 200);
  });

  test('validation: bad role, empty name, unknown field, past expiry → 400 with field errors', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const res = await app.inject({
      method: 'POST', url: '/api/api-keys', headers: asRole(org, 'admin'), payload: { name: '', role: 'owner', colour: 'red' },
    });
    assert.equal(res.statusCode, 400);
    const body = res.json();
    assert.equal(body.code, 'validation_error');
    const paths = body.errors.map((e: any) => e.path).sort();
    assert.deepEqual(paths, ['body.colour', 'body.name', 'body.role']);
    const past = await app.inject({
      method: 'POST', url: '/api/api-keys', headers: asRole(org, 'admin'),
      payload: { name: 'old', role: 'user', expires_at: '2001-01-01T00:00:00Z' },
    });
    assert.equal(past.statusCode, 400);
    assert.equal(past.json().errors[0].path, 'body.expires_at');
  });

  test('revoke: the key stops working on the very next request and stays listed as revoked', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const victim = await newKey(org, 'user');
    assert.equal((await app.inject({ url: '/api/api-keys', headers: keyHeaders(org, victim.key) })).statusCode, 200);

    const res = await app.inject({ method: 'DELETE', url: `/api/api-keys/${victim.view.key_id}`, headers: asRole(org, 'agent_manager') });
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.equal(body.success, true);
    assert.equal(typeof body.message, 'string');
    assert.equal(body.data.key_id, victim.view.key_id);
    assert.equal(body.data.status, 'revoked');

    const next = await app.inject({ url: '/api/api-keys', headers: keyHeaders(org, victim.key) });
    assert.equal(next.statusCode, 401);
    const list = await app.inject({ url: '/api/api-keys?page_size=100', headers: asRole(org, 'admin') });
    const listed = list.json().data.find((k: any) => k.key_id === victim.view.key_id);
    assert.equal(listed.status, 'revoked');

    const again = await app.inject({ method: 'DELETE', url: `/api/api-keys/${victim.view.key_id}`, headers: asRole(org, 'admin') });
    assert.equal(again.statusCode, 200, 'revoking twice is harmless');
  });

  test("revoke: a key above the caller's role → 403 {detail}; a missing or foreign key → 404 {detail}", async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const other = await createOrg();
    const adminKey = await newKey(org, 'admin');
    const above = await app.inject({ method: 'DELETE', url: `/api/api-keys/${adminKey.view.key_id}`, headers: asRole(org, 'agent_manager') });
    assert.equal(above.statusCode, 403);
    assert.equal(typeof above.json().detail, 'string');
    assert.equal(above.json().code, 'role_too_high');

    const missing = await app.inject({ method: 'DELETE', url: '/api/api-keys/apikey_000000000000', headers: asRole(org, 'admin') });
    assert.equal(missing.statusCode, 404);
    assert.equal(typeof missing.json().detail, 'string');

    const foreign = await newKey(other, 'user');
    const cross = await app.inject({ method: 'DELETE', url: `/api/api-keys/${foreign.view.key_id}`, headers: asRole(org, 'admin') });
    assert.equal(cross.statusCode, 404);
    const stillWorks = await app.inject({ url: '/api/api-keys', headers: keyHeaders(other, foreign.key) });
    assert.equal(stillWorks.statusCode, 200, "another organization's key is untouched");

    const badFormat = await app.inject({ method: 'DELETE', url: '/api/api-keys/whatever', headers: asRole(org, 'admin') });
    assert.equal(badFormat.statusCode, 404);

    const userRole = await app.inject({ method: 'DELETE', url: `/api/api-keys/${foreign.view.key_id}`, headers: asRole(org, 'user') });
    assert.equal(userRole.statusCode, 403);
  });

  test('list pages newest first with a stable cursor and total_count', async () => {
    const { app } = await testEnv();
    const org = await createOrg(); // 3 keys already
    for (let i = 0; i < 4; i++) await newKey(org);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: any = await app.inject({
        url: `/api/api-keys?page_size=3${cursor ? `&cursor=${cursor}` : ''}`, headers: asRole(org, 'user'),
      });
      assert.equal(res.statusCode, 200);
      const body = res.json();
      assert.equal(body.pagination.total_count, pages === 0 ? 7 : 8);
      assert.equal(body.pagination.page_size, body.data.length);
      seen.push(...body.data.map((k: any) => k.key_id));
      if (pages === 0) await newKey(org); // an insert between pages does not shift the next page
      cursor = body.pagination.next_cursor;
      assert.equal(body.pagination.has_more, cursor !== null);
      pages++;
    } while (cursor);
    assert.equal(pages, 3);
    assert.equal(new Set(seen).size, 7, 'no key repeated or skipped');
    const bad = await app.inject({ url: '/api/api-keys?cursor=not-a-cursor', headers: asRole(org, 'user') });
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json().code, 'invalid_cursor');
    const tooBig = await app.inject({ url: '/api/api-keys?page_size=101', headers: asRole(org, 'user') });
    assert.equal(tooBig.statusCode, 400);
  });

  test('last_used_at is recorded, at most once a minute', async () => {
    const { app, database } = await testEnv();
    const org = await createOrg();
    const key = await newKey(org, 'user');
    await app.inject({ url: '/api/api-keys', headers: keyHeaders(org, key.key) });
    let row;
    for (let i = 0; i < 50; i++) {
      ({ rows: [row] } = await database.pool.query('SELECT last_used_at FROM api_keys WHERE id = $1', [key.view.key_id]));
      if (row.last_used_at) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.ok(row.last_used_at instanceof Date);
    const first = row.last_used_at.getTime();
    for (let i = 0; i < 5; i++) await app.inject({ url: '/api/api-keys', headers: keyHeaders(org, key.key) });
    await new Promise((r) => setTimeout(r, 50));
    const { rows: [after] } = await database.pool.query('SELECT last_used_at FROM api_keys WHERE id = $1', [key.view.key_id]);
    assert.equal(after.last_used_at.getTime(), first);
  });
});
