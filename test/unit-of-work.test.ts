import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import pg from 'pg';
import { CommitHolder, runHoldingCommits } from '../src/db/held-commit.ts';
import { transaction } from '../src/db/unit-of-work.ts';
import { testEnv } from './helpers/env.ts';
import { asRole, createOrg } from './helpers/fixtures.ts';

/** The statements the database was sent while `work` ran, by their text. */
async function statementsOf(work: () => Promise<unknown>): Promise<string[]> {
  const sent: string[] = [];
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const q = args[0] as string | { text?: string };
    sent.push(typeof q === 'string' ? q : q?.text ?? '');
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query;
  try {
    await work();
  } finally {
    pg.Client.prototype.query = query;
  }
  return sent;
}

/**
 * A transaction's unit of work (src/db/unit-of-work.ts): the audit entries, events, versions and
 * idempotency keys a change defers are written once, in one statement, just before its COMMIT,
 * whatever order they were added in; they commit and roll back with the change.
 */
describe('the unit of work of a transaction', () => {
  const entries = async (orgId: string, resourceId: string) => {
    const { database } = await testEnv();
    const { rows } = await database.pool.query('SELECT action FROM audit_logs WHERE client_id = $1 AND resource_id = $2 ORDER BY action', [orgId, resourceId]);
    return rows.map((r) => r.action as string);
  };
  const events = async (orgId: string, type: string) => {
    const { database } = await testEnv();
    const { rows } = await database.pool.query('SELECT data FROM events WHERE client_id = $1 AND type = $2', [orgId, type]);
    return rows.map((r) => r.data as { agent_id: string });
  };
  const change = (action: string, resourceId: string) => ({ action, resourceType: 'agent', resourceId });

  test('entries recorded with no event are written at the commit; a failed change leaves none', async () => {
    const { database, services } = await testEnv();
    const org = await createOrg();
    const by = { system: 'test', orgId: org.orgId };
    await transaction(database.db, async (tx) => {
      await services.audit.record(tx, by, [change('agent.update', 'agent_kept00001'), change('agent.delete', 'agent_kept00001')]);
      assert.equal(tx.unit.pending, 1, 'held until the commit');
    });
    assert.deepEqual(await entries(org.orgId, 'agent_kept00001'), ['agent.delete', 'agent.update']);

    await assert.rejects(transaction(database.db, async (tx) => {
      await services.audit.record(tx, by, change('agent.update', 'agent_gone00001'));
      throw new Error('the change fails after its entry was recorded');
    }));
    assert.deepEqual(await entries(org.orgId, 'agent_gone00001'), []);
  });

  test('in a savepoint that rolls back, the entry goes with it; the outer change keeps its own', async () => {
    const { database, services } = await testEnv();
    const org = await createOrg();
    const by = { system: 'test', orgId: org.orgId };
    await transaction(database.db, async (tx) => {
      await services.audit.record(tx, by, change('agent.update', 'agent_outer0001'));
      await assert.rejects(tx.transaction(async (savepoint) => {
        await services.audit.record(savepoint, by, change('agent.update', 'agent_inner0001'));
        throw new Error('the savepoint rolls back');
      }));
    });
    assert.deepEqual(await entries(org.orgId, 'agent_outer0001'), ['agent.update']);
    assert.deepEqual(await entries(org.orgId, 'agent_inner0001'), []);
  });

  test('an event is refused outside a transaction of the unit of work: on the pool and in a savepoint', async () => {
    const { database, services } = await testEnv();
    const org = await createOrg();
    await assert.rejects(services.outbox.emit(database.db, org.orgId, 'agent.deleted', { agent_id: 'agent_pool00001' }), /needs a transaction/);
    await transaction(database.db, async (tx) => {
      await assert.rejects(tx.transaction((savepoint) => services.outbox.emit(savepoint, org.orgId, 'agent.deleted', { agent_id: 'agent_save00001' })), /needs a transaction/);
    });
    assert.deepEqual(await events(org.orgId, 'agent.deleted'), []);
  });

  test('event before entry or entry before event: one statement either way, and both committed', async () => {
    const { database, services } = await testEnv();
    const org = await createOrg();
    const by = { system: 'test', orgId: org.orgId };
    for (const [resourceId, eventFirst] of [['agent_evtfirst01', true], ['agent_audfirst01', false]] as const) {
      const sent = await statementsOf(() => transaction(database.db, async (tx) => {
        if (eventFirst) await services.outbox.emit(tx, org.orgId, 'agent.deleted', { agent_id: resourceId });
        await services.audit.record(tx, by, change('agent.delete', resourceId));
        if (!eventFirst) await services.outbox.emit(tx, org.orgId, 'agent.deleted', { agent_id: resourceId });
      }));
      // Inserts only: the same pool's background work (the webhook dispatcher's claim, an UPDATE of
      // webhook_deliveries) may run meanwhile, and is no write of this change.
      const writes = sent.filter((text) => /INSERT INTO (audit_logs|events|webhook_deliveries)\b/.test(text));
      assert.equal(writes.length, 1, `one statement (event first: ${eventFirst}): ${writes.join('\n---\n')}`);
      for (const table of [/INSERT INTO audit_logs/, /INSERT INTO events/, /INSERT INTO webhook_deliveries/]) assert.match(writes[0]!, table);
      assert.deepEqual(await entries(org.orgId, resourceId), ['agent.delete']);
      assert.deepEqual((await events(org.orgId, 'agent.deleted')).filter((d) => d.agent_id === resourceId).length, 1);
    }
  });

  test("a pending write's check that throws rolls the whole change back", async () => {
    const { database, services } = await testEnv();
    const org = await createOrg();
    const by = { system: 'test', orgId: org.orgId };
    await assert.rejects(transaction(database.db, async (tx) => {
      await services.audit.record(tx, by, change('agent.update', 'agent_checked01'));
      tx.unit.defer({ text: 'UPDATE idempotency_keys SET status = status WHERE key = $1 RETURNING 1', values: [randomUUID()], check: (rows) => {
        if (rows === 0) throw new Error('no row: refused');
      } });
    }), /refused/);
    assert.deepEqual(await entries(org.orgId, 'agent_checked01'), []);
  });

  test('creating an agent: its version, audit entry, event and deliveries in one statement, and with an Idempotency-Key its kept response too', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    for (const keyed of [false, true]) {
      const headers: Record<string, string> = { ...asRole(org, 'admin'), ...(keyed ? { 'idempotency-key': randomUUID() } : {}) };
      let res: Awaited<ReturnType<typeof app.inject>> | undefined;
      const sent = await statementsOf(async () => {
        res = await app.inject({ method: 'POST', url: '/api/agents', headers, payload: { agent_name: 'One write' } });
      });
      assert.equal(res!.statusCode, 200, res!.body);
      const agentId: string = res!.json().data.agent_id;
      assert.deepEqual(await entries(org.orgId, agentId), ['agent.create']);
      const pending = sent.filter((text) => /INSERT INTO (audit_logs|agent_versions|events|idempotency_keys)\b/.test(text)); // inserts: not the background's updates
      assert.equal(pending.length, 1, pending.join('\n---\n'));
      for (const table of [/agent_versions/, /audit_logs/, /INSERT INTO events/, /webhook_deliveries/]) assert.match(pending[0]!, table);
      if (keyed) assert.match(pending[0]!, /idempotency_keys/);
    }
  });

  /** A deferred write that fails at the flush, after `sleepMs` (its check refuses the one row a SELECT returns). */
  const failingWrite = (sleepMs: number) => ({
    text: 'SELECT pg_sleep($1::float8 / 1000)', values: [sleepMs],
    check: () => {
      throw new Error('the pending write failed');
    },
  });

  test('a held commit: the pending writes go with the seal, or, for a unit that acts after its transaction, before the hold', async () => {
    const { database } = await testEnv();
    const seals: string[] = [];
    for (const flushFirst of [false, true]) {
      const holder = new CommitHolder<string>((_unit, outcome) => void seals.push(outcome ?? 'none'), 5_000, { flushFirst });
      const handedOut = runHoldingCommits(holder as CommitHolder<unknown>, () => transaction(database.db, async (tx) => {
        tx.unit.defer(failingWrite(0));
        return 'the result';
      }));
      if (flushFirst) {
        // The work fails itself: its caller never goes on to act outside the database.
        await assert.rejects(handedOut, /the pending write failed/);
        assert.equal(await holder.settle('a response'), false, 'nothing held');
      } else {
        assert.equal(await handedOut, 'the result', 'handed out at once');
        await assert.rejects(holder.settle('a response'), /the pending write failed/);
      }
    }
    assert.deepEqual(seals, ['a response'], 'sealed only where the writes had not failed first');
  });

  test('a hold that ran out: a later settle waits for that COMMIT and reports its failure', async () => {
    const { database } = await testEnv();
    const holder = new CommitHolder<string>(() => {}, 20);
    const handedOut = runHoldingCommits(holder as CommitHolder<unknown>, () => transaction(database.db, async (tx) => {
      tx.unit.defer(failingWrite(400));
      return 'the result';
    }));
    assert.equal(await handedOut, 'the result');
    await new Promise((resolve) => setTimeout(resolve, 100)); // the hold ran out; its COMMIT is under way
    assert.equal(holder.holding, false);
    await assert.rejects(holder.settle('a response'), /the pending write failed/, 'not "nothing held, all well"');
  });
});
