import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pg from 'pg';
import { testEnv } from './helpers/env.ts';
import { asRole, createOrg } from './helpers/fixtures.ts';

/** Audit entries deferred in a transaction (db/ride-along.ts): they commit and roll back with their change. */
describe('deferred audit entries', () => {
  const entries = async (orgId: string, resourceId: string) => {
    const { database } = await testEnv();
    const { rows } = await database.pool.query('SELECT action FROM audit_logs WHERE client_id = $1 AND resource_id = $2 ORDER BY action', [orgId, resourceId]);
    return rows.map((r) => r.action as string);
  };
  const change = (action: string, resourceId: string) => ({ action, resourceType: 'agent', resourceId });

  test('an entry recorded with no event to carry it is written before the commit; a failed change leaves none', async () => {
    const { database, services } = await testEnv();
    const org = await createOrg();
    const by = { system: 'test', orgId: org.orgId };
    await database.db.transaction(async (tx) => {
      await services.audit.record(tx, by, [change('agent.update', 'agent_kept00001'), change('agent.delete', 'agent_kept00001')]);
    });
    assert.deepEqual(await entries(org.orgId, 'agent_kept00001'), ['agent.delete', 'agent.update']);

    await assert.rejects(database.db.transaction(async (tx) => {
      await services.audit.record(tx, by, change('agent.update', 'agent_gone00001'));
      throw new Error('the change fails after its entry was recorded');
    }));
    assert.deepEqual(await entries(org.orgId, 'agent_gone00001'), []);
  });

  test('in a savepoint that rolls back, the entry goes with it; the outer change keeps its own', async () => {
    const { database, services } = await testEnv();
    const org = await createOrg();
    const by = { system: 'test', orgId: org.orgId };
    await database.db.transaction(async (tx) => {
      await services.audit.record(tx, by, change('agent.update', 'agent_outer0001'));
      await assert.rejects(tx.transaction(async (savepoint) => {
        await services.audit.record(savepoint, by, change('agent.update', 'agent_inner0001'));
        throw new Error('the savepoint rolls back');
      }));
    });
    assert.deepEqual(await entries(org.orgId, 'agent_outer0001'), ['agent.update']);
    assert.deepEqual(await entries(org.orgId, 'agent_inner0001'), []);
  });

  test('a change with an event writes its entry in the event statement: no statement of its own', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const sent: string[] = [];
    const query = pg.Client.prototype.query;
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      const q = args[0] as string | { text?: string };
      sent.push(typeof q === 'string' ? q : q?.text ?? '');
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof query;
    let res;
    try {
      res = await app.inject({ method: 'POST', url: '/api/agents', headers: asRole(org, 'admin'), payload: { agent_name: 'Carried' } });
    } finally {
      pg.Client.prototype.query = query;
    }
    assert.equal(res.statusCode, 200, res.body);
    const agentId = res.json().data.agent_id;
    assert.deepEqual(await entries(org.orgId, agentId), ['agent.create']);
    const auditStatements = sent.filter((text) => /audit_logs/i.test(text));
    assert.equal(auditStatements.length, 1);
    assert.match(auditStatements[0]!, /INSERT INTO events[\s\S]*INSERT INTO audit_logs/);
  });
});
