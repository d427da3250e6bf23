import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { IdempotencyService } from '../src/modules/idempotency/service.ts';
import { testEnv } from './helpers/env.ts';
import { asRole, createOrg } from './helpers/fixtures.ts';

let keyCounter = 0;
const newKey = () => `at-commit-${Date.now().toString(36)}-${++keyCounter}`;

/**
 * Routes whose whole effect is one transaction (`idempotency: 'in-transaction'`: agents, tools,
 * webhook endpoints, key creation) take their Idempotency-Key at that transaction's COMMIT, with the
 * response, in one statement: no claim of its own before the handler. What a retry gets is the same
 * as on every other write (extensions.md §6); what differs is that a concurrent retry's change runs
 * and rolls back instead of being turned away before it runs.
 */
describe('Idempotency-Key taken at the change\'s commit', () => {
  test('the key is completed with the response in the change\'s transaction; a retry replays it and the change is there once', async () => {
    const { app, database } = await testEnv();
    const org = await createOrg();
    const key = newKey();
    const send = () => app.inject({ method: 'POST', url: '/api/tools', headers: asRole(org, 'admin', { 'idempotency-key': key }), payload: toolBody('lookup') });
    const first = await send();
    assert.equal(first.statusCode, 200, first.body);
    const { rows } = await database.pool.query('SELECT status, response_status, response_body FROM idempotency_keys WHERE client_id = $1 AND key = $2', [org.orgId, key]);
    assert.deepEqual(rows, [{ status: 'completed', response_status: 200, response_body: first.body }]);
    // The retry runs the handler again, which now meets the tool's unique name (409) and rolls back:
    // it answers the kept 200, not its own refusal.
    const retry = await send();
    assert.equal(retry.statusCode, 200, retry.body);
    assert.equal(retry.headers['idempotent-replayed'], 'true');
    assert.equal(retry.body, first.body);
    const tools = await database.pool.query('SELECT count(*)::int AS n FROM tools WHERE client_id = $1', [org.orgId]);
    assert.equal(tools.rows[0].n, 1);
  });

  test('ten requests at once with one key and different bodies: one agent, the others 409 reused or in use', async () => {
    const { app, database } = await testEnv();
    const org = await createOrg();
    const key = newKey();
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => app.inject({
      method: 'POST', url: '/api/agents', headers: asRole(org, 'admin', { 'idempotency-key': key }), payload: { agent_name: `Racer ${i}` },
    })));
    const ran = results.filter((r) => r.statusCode === 200);
    assert.equal(ran.length, 1, results.map((r) => `${r.statusCode} ${r.body.slice(0, 80)}`).join('\n'));
    for (const r of results) {
      if (r === ran[0]) continue;
      assert.equal(r.statusCode, 409, r.body);
      assert.ok(['idempotency_key_reused', 'idempotency_key_in_use'].includes(r.json().code), r.body);
    }
    const agents = await database.pool.query('SELECT agent_name FROM agents WHERE client_id = $1', [org.orgId]);
    assert.deepEqual(agents.rows.map((a) => a.agent_name), [ran[0]!.json().data.agent_name]);
    const audit = await database.pool.query("SELECT count(*)::int AS n FROM audit_logs WHERE client_id = $1 AND action = 'agent.create'", [org.orgId]);
    assert.equal(audit.rows[0].n, 1, 'the changes that rolled back left no audit entry');
  });

  test('keep takes a free, expired, lapsed or own key, and no other', async () => {
    const { database } = await testEnv();
    const org = await createOrg();
    const now = new Date('2026-06-01T12:00:00Z');
    const keys = new IdempotencyService({ database, now: () => now });
    const scope = (key: string) => ({ orgId: org.orgId, credentialId: 'cred_test', key });
    const response = { status: 200, contentType: 'application/json', body: '{"ok":true}' };
    const row = (key: string, status: string, lockedAt: Date, expiresAt: Date) => database.pool.query(
      `INSERT INTO idempotency_keys (client_id, credential_id, key, fingerprint, status, lock_id, locked_at, created_at, expires_at)
       VALUES ($1, 'cred_test', $2, 'other', $3, 'someone-else', $4, $4, $5)`, [org.orgId, key, status, lockedAt, expiresAt]);
    const ago = (ms: number) => new Date(now.getTime() - ms);
    const later = new Date(now.getTime() + 3_600_000);

    assert.equal(await keys.keep(scope('free'), 'print', randomUUID(), response), true, 'a free key');
    await row('expired', 'completed', ago(25 * 3_600_000), ago(1000));
    assert.equal(await keys.keep(scope('expired'), 'print', randomUUID(), response), true, 'an expired key');
    await row('lapsed', 'running', ago(16_000), later); // the lease is 15 s
    assert.equal(await keys.keep(scope('lapsed'), 'print', randomUUID(), response), true, 'a running key past its lease');
    await row('running', 'running', ago(1000), later);
    assert.equal(await keys.keep(scope('running'), 'print', randomUUID(), response), false, 'a running key in its lease');
    await row('kept', 'completed', ago(1000), later);
    assert.equal(await keys.keep(scope('kept'), 'print', randomUUID(), response), false, 'another request\'s kept key');
    const own = randomUUID();
    assert.equal(await keys.keep(scope('own'), 'print', own, undefined), true, 'committed without its response');
    assert.deepEqual(await keys.existing(scope('own')), { fingerprint: 'print', response: undefined });
    assert.equal(await keys.keep(scope('own'), 'print', own, response), true, 'its own key, now with the response');
    assert.deepEqual(await keys.existing(scope('own')), { fingerprint: 'print', response });
  });
});

function toolBody(name: string) {
  return { tool_name: name, tool_description: 'Looks an order up', webhook_url: 'https://example.com/hook' };
}
