import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, test } from 'node:test';
import pino from 'pino';
import { Type } from 'typebox';
import { buildApp } from '../src/app.ts';
import { defineJob, jobUnit } from '../src/jobs/job.ts';
import { JobQueue } from '../src/jobs/queue.ts';
import { startWorkers } from '../src/workers.ts';
import { buildServices, JOB_DEFINITIONS } from '../src/services.ts';
import { testConfig, testEnv } from './helpers/env.ts';
import { asRole, createOrg, uniqueEmail } from './helpers/fixtures.ts';
import { transaction, clientTransaction } from '../src/db/unit-of-work.ts';

/** A logger whose lines the test reads. */
function capturingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  return { log: pino({ level: 'info' }, stream), lines };
}

const within = <T>(ms: number, work: Promise<T>, what: string) =>
  Promise.race([work, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms).unref())]);

describe('composition root and job queue', () => {
  test('services built with a queue of their own serve an invitation (its job is sent inside the transaction) without hanging', async () => {
    const { database, tmpDir } = await testEnv();
    const services = await buildServices(testConfig(tmpDir), database, { background: true });
    const app = await buildApp(services);
    try {
      const org = await createOrg();
      const res = await within(15_000, app.inject({
        method: 'POST', url: '/api/auth/organizations/invitations', headers: asRole(org, 'admin'), payload: { email: uniqueEmail('own-queue'), role: 'user' },
      }), 'the invitation');
      assert.equal(res.statusCode, 200, res.body);
      const { rows } = await database.pool.query("SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'invitation-email' AND data->>'inviteId' = $1", [res.json().data.invite_id]);
      assert.equal(rows[0].n, 1, 'the email job was written with the invitation');
    } finally {
      await app.close();
      await services.close();
    }
  });

  test('a queue refuses to send before it started, and to start inside a transaction', async () => {
    const { database, config, services } = await testEnv();
    const queue = new JobQueue({ connection: database.connection, config: config.jobs, log: services.log, definitions: JOB_DEFINITIONS, background: true });
    const [definition] = JOB_DEFINITIONS;
    await assert.rejects(queue.send(definition!, { clientId: 'org_000000000000', documentId: 'doc_0', revision: 1 }), /not started/);
    await assert.rejects(transaction(database.db, async () => queue.start()), /cannot start inside a database transaction/);
    await assert.rejects(clientTransaction(database, async () => queue.start()), /cannot start inside a database transaction/);
    await queue.stop();
  });

  test('a payload is checked on receipt: a job that does not match its schema is logged and its handler never runs', async () => {
    const { database, config } = await testEnv();
    const { log, lines } = capturingLogger();
    const probe = defineJob({ name: `test-probe-${Date.now()}`, payload: Type.Object({ n: Type.Integer() }), options: () => ({ retryLimit: 0 }) });
    const queue = new JobQueue({ connection: database.connection, config: { ...config.jobs, pollSeconds: 1 }, log, definitions: [probe], background: true });
    await queue.start();
    const handled: number[] = [];
    let sawGood: () => void;
    const good = new Promise<void>((resolve) => (sawGood = resolve));
    try {
      await queue.work([jobUnit(probe, async (payload) => { handled.push(payload.n); sawGood(); })]);
      await queue.boss.send(probe.name, { n: 'not a number' }); // past send()'s own check, as a foreign writer could
      await queue.send(probe, { n: 7 });
      await within(15_000, good, 'the good job');
      await within(15_000, (async () => { while (!lines.some((l) => l.queue === probe.name)) await new Promise((r) => setTimeout(r, 100)); })(), 'the log line');
      assert.deepEqual(handled, [7]);
      const dropped = lines.find((l) => l.queue === probe.name)!;
      assert.equal(dropped.level, 50);
      assert.match(String(dropped.msg), /does not match its schema/);
    } finally {
      await queue.stop();
    }
  });

  test("pg-boss's errors reach the application logger", async () => {
    const { database, config } = await testEnv();
    const { log, lines } = capturingLogger();
    const queue = new JobQueue({ connection: database.connection, config: config.jobs, log, definitions: [], background: true });
    queue.boss.emit('error', new Error('connection terminated unexpectedly'));
    const line = lines.find((l) => l.msg === 'job queue error');
    assert.ok(line, 'logged');
    assert.equal(line.level, 50);
    assert.match(String((line.err as { message: string }).message), /connection terminated/);
  });

  test('every queue has exactly one job unit, and a unit without a queue is refused', async () => {
    const { services } = await testEnv();
    assert.deepEqual(services.jobs.map((u) => u.name).sort(), JOB_DEFINITIONS.map((d) => d.name).sort());
    const stray = jobUnit(defineJob({ name: 'no-such-queue', payload: Type.Object({}), options: () => ({}) }), async () => {});
    await assert.rejects(startWorkers({ queue: services.queue, webhookDispatcher: services.webhookDispatcher, jobs: [...services.jobs, stray] }), /no queue for \[no-such-queue\]/);
  });
});
