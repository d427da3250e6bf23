import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { SMTPServer } from 'smtp-server';
import { buildApp } from '../src/app.ts';
import { S3ObjectStore } from '../src/adapters/storage/s3-object-store.ts';
import { INVITATION_EMAIL } from '../src/modules/invitations/jobs.ts';
import { INDEX_DOCUMENT } from '../src/modules/knowledge-base/jobs.ts';
import { buildServices, type Services } from '../src/services.ts';
import { testConfig, testEnv } from './helpers/env.ts';
import { asRole, createOrg, uniqueEmail } from './helpers/fixtures.ts';
import { multipart, waitForProcessing } from './helpers/documents.ts';
import { settledJob } from './helpers/workers.ts';

/**
 * Runs `work` with the jobs of one queue worked by `services` (built on another configuration)
 * instead of the shared test workers, through the real pg-boss queue.
 */
async function workedBy(services: Services, queue: string, work: () => Promise<void>): Promise<void> {
  const env = await testEnv();
  await env.queue.boss.offWork(queue);
  await env.queue.work(services.jobs.filter((unit) => unit.name === queue));
  try {
    await work();
  } finally {
    await env.queue.boss.offWork(queue);
    await env.queue.work(env.services.jobs.filter((unit) => unit.name === queue));
  }
}

describe('invitation emails through pg-boss with an SMTP server that refuses at first', () => {
  let smtp: SMTPServer;
  let port: number;
  const attempts: string[] = [];
  const delivered: string[] = [];
  before(async () => {
    smtp = new SMTPServer({
      authOptional: true, disabledCommands: ['STARTTLS'],
      onRcptTo(address, _session, callback) {
        attempts.push(address.address);
        // The first attempt for each address is refused with a temporary failure, as a busy server does.
        if (attempts.filter((a) => a === address.address).length === 1) {
          return callback(Object.assign(new Error('Mailbox busy, try again later'), { responseCode: 451 }));
        }
        callback();
      },
      onData(stream, session, done) {
        stream.resume();
        stream.on('end', () => { delivered.push(...session.envelope.rcptTo.map((r) => r.address)); done(); });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
    port = (smtp.server.address() as { port: number }).port;
  });
  after(() => new Promise<void>((resolve) => smtp.close(() => resolve())));

  test('the job fails on the 451, pg-boss retries it, and the mail is delivered exactly once', async () => {
    const env = await testEnv();
    const services = await buildServices(testConfig(env.tmpDir, { MAILER: 'smtp', SMTP_URL: `smtp://127.0.0.1:${port}` }), env.database, { queue: env.queue, log: env.services.log });
    const app = await buildApp(services, { closeServices: true });
    try {
      await workedBy(services, INVITATION_EMAIL.name, async () => {
        const org = await createOrg();
        const email = uniqueEmail('retry');
        const res = await app.inject({ method: 'POST', url: '/api/auth/organizations/invitations', headers: asRole(org, 'admin'), payload: { email, role: 'user' } });
        assert.equal(res.statusCode, 200, res.body);
        const inviteId = res.json().data.invite_id;
        const deadline = Date.now() + 40_000;
        while (!delivered.includes(email)) {
          assert.ok(Date.now() < deadline, `not delivered; attempts: ${attempts.filter((a) => a === email).length}`);
          await new Promise((r) => setTimeout(r, 200));
        }
        const { rows } = await env.database.pool.query("SELECT id FROM pgboss.job WHERE name = $1 AND data->>'inviteId' = $2", [INVITATION_EMAIL.name, inviteId]);
        assert.equal(rows.length, 1, 'one job for the invitation');
        const job = await settledJob(env.queue.boss, INVITATION_EMAIL.name, rows[0].id);
        assert.equal(job?.state, 'completed');
        assert.ok((job?.retryCount ?? 0) >= 1, `retried by pg-boss (retryCount ${job?.retryCount})`);
        assert.equal(attempts.filter((a) => a === email).length, 2, 'refused once, accepted once');
        assert.equal(delivered.filter((a) => a === email).length, 1, 'delivered exactly once');
      });
    } finally {
      await app.close();
    }
  });
});

describe('document indexing by a worker whose object store is S3 (s3rver on 127.0.0.1)', () => {
  let s3: S3rver;
  let services: Services;
  let store: S3ObjectStore;
  before(async () => {
    const env = await testEnv();
    s3 = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: path.join(env.tmpDir, 's3rver-index'), configureBuckets: [{ name: 'switchboard-index', configs: [] }] });
    const { port } = await s3.run();
    const config = testConfig(env.tmpDir, {
      STORAGE_BACKEND: 's3', S3_BUCKET: 'switchboard-index', S3_ENDPOINT: `http://127.0.0.1:${port}`, S3_ACCESS_KEY_ID: 'S3RVER', S3_SECRET_ACCESS_KEY: 'S3RVER',
    });
    services = await buildServices(config, env.database, { queue: env.queue, log: env.services.log });
    store = services.adapters.store as S3ObjectStore;
  });
  after(async () => {
    await services?.close();
    await s3?.close();
  });

  test('an uploaded file is read back from the bucket by the worker, indexed, found by search, and deleted with its object', async () => {
    const app = await buildApp(services);
    try {
      await workedBy(services, INDEX_DOCUMENT.name, async () => {
        const org = await createOrg();
        const content = '# Tides\n\nThe harbour master posts the tide tables every Monday at dawn.';
        const body = multipart({ name: 'Harbour notes' }, { name: 'harbour.md', content });
        const res = await app.inject({ method: 'POST', url: '/api/knowledge-base', headers: asRole(org, 'agent_manager', { 'content-type': body.contentType }), payload: body.payload });
        assert.equal(res.statusCode, 200, res.body);
        const id = res.json().data.documentation_id;
        const done = await waitForProcessing(org, id, 30_000, app);
        assert.equal(done.processing_status, 'completed', done.processing_error);
        const full = (await app.inject({ url: `/api/knowledge-base/${id}`, headers: asRole(org, 'user') })).json().data;
        assert.equal(full.storage_uri, `s3://switchboard-index/${full.storage_key}`);
        // Read from the bucket with the SDK's client directly, not through the adapter under test.
        const object = await store.client.send(new GetObjectCommand({ Bucket: 'switchboard-index', Key: full.storage_key }));
        assert.equal(await object.Body?.transformToString(), content, 'the uploaded file is the object in the bucket');
        const hits = (await app.inject({ method: 'POST', url: '/api/knowledge-base/search', headers: asRole(org, 'user'), payload: { query: 'tide tables harbour master' } })).json().data;
        assert.equal(hits[0]?.documentation_id, id);
        assert.match(hits[0].text, /tide tables every Monday/);
        assert.equal((await app.inject({ method: 'DELETE', url: `/api/knowledge-base/${id}`, headers: asRole(org, 'admin') })).statusCode, 200);
        const left = await store.client.send(new ListObjectsV2Command({ Bucket: 'switchboard-index', Prefix: `${org.orgId}/` }));
        assert.deepEqual((left.Contents ?? []).map((o) => o.Key), [], 'the object is gone');
      });
    } finally {
      await app.close();
    }
  });
});
