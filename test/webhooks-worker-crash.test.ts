import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { describe, test } from 'node:test';
import { exited, spawnWorker, workerDatabaseUrl } from './helpers/workers.ts';
import { TEST_ENCRYPTION_KEY, testEnv } from './helpers/env.ts';
import { asRole, createOrg } from './helpers/fixtures.ts';
import { startReceiver } from './helpers/webhook-receiver.ts';

describe('webhooks: a `switchboard worker` killed with SIGKILL in the middle of deliveries', () => {
  test('every event is still delivered, always under its own id (a redelivery repeats the same webhook-id)', async () => {
    const env = await testEnv();
    const { app, database, tmpDir } = env;
    // The receiver takes 1.5 s per request, so the first worker dies with attempts in flight and most not made.
    const receiver = await startReceiver({ answer: () => ({ status: 200, body: 'ok', delayMs: 1500 }) });
    const databaseUrl = workerDatabaseUrl(database);
    const workerEnv = {
      DATABASE_URL: databaseUrl, DATA_DIR: path.join(tmpDir, 'webhook-worker'), LOG_LEVEL: 'silent',
      ENCRYPTION_KEY: TEST_ENCRYPTION_KEY.toString('base64'), ALLOWED_NETWORKS: '127.0.0.2/32',
      WEBHOOK_TIMEOUT_SECONDS: '5', WEBHOOK_RETRY_DELAYS_SECONDS: '1,1,1,1,1,1,1',
    };
    await env.services.webhookDispatcher.stop(); // only the child workers deliver during this test
    const children: ChildProcess[] = [];
    try {
      const org = await createOrg();
      const hook = await app.inject({ method: 'POST', url: '/api/webhooks', headers: asRole(org, 'admin'), payload: { url: `${receiver.url}/crash` } });
      receiver.secrets.push(hook.json().data.secret);
      const agents = 40;
      for (let i = 0; i < agents; i++) {
        const res = await app.inject({ method: 'POST', url: '/api/agents', headers: asRole(org, 'admin'), payload: { agent_name: `Agent ${i}` } });
        assert.equal(res.statusCode, 200);
      }
      const { rows: events } = await database.pool.query('SELECT id FROM events WHERE client_id = $1', [org.orgId]);
      assert.equal(events.length, agents);

      children.push(spawnWorker(workerEnv));
      await receiver.waitFor((r) => r.length >= 5, 180_000); // a worker starts slowly on a busy machine
      children[0]!.kill('SIGKILL');
      await exited(children[0]!);
      const beforeRestart = receiver.received.length;
      assert.ok(beforeRestart < agents, `the first worker was stopped mid-way (${beforeRestart} of ${agents})`);

      children.push(spawnWorker(workerEnv));
      const ids = new Set<string>(events.map((e) => e.id));
      await receiver.waitFor((r) => ids.size === new Set(r.map((x) => x.event?.id)).size, 240_000);
      const { rows: left } = await database.pool.query("SELECT count(*)::int AS n FROM webhook_deliveries WHERE client_id = $1 AND status <> 'succeeded'", [org.orgId]);
      const deadline = Date.now() + 30_000;
      while ((await database.pool.query("SELECT count(*)::int AS n FROM webhook_deliveries WHERE client_id = $1 AND status <> 'succeeded'", [org.orgId])).rows[0].n > 0) {
        assert.ok(Date.now() < deadline, `deliveries not all succeeded: ${left[0].n}`);
        await new Promise((r) => setTimeout(r, 200));
      }
      // Every request verified, and its webhook-id is the id of the event it carries: one id per event.
      for (const r of receiver.received) {
        assert.equal(r.verifiedWith.length, 1);
        assert.equal(r.headers['webhook-id'], r.event.id);
      }
      assert.deepEqual(new Set(receiver.received.map((r) => r.event.id)), ids);
      const idsPerAgent = new Map<string, Set<string>>();
      for (const r of receiver.received) {
        const set = idsPerAgent.get(r.event.data.agent_id) ?? new Set();
        set.add(String(r.headers['webhook-id']));
        idsPerAgent.set(r.event.data.agent_id, set);
      }
      assert.equal(idsPerAgent.size, agents);
      assert.ok([...idsPerAgent.values()].every((s) => s.size === 1), 'no change was delivered under two ids');
    } finally {
      for (const child of children) child.kill('SIGTERM');
      await Promise.all(children.map(exited));
      await receiver.close();
      env.services.webhookDispatcher.start(); // the shared process delivers again
    }
  });
});
