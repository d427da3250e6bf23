import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { testEnv, TEST_ENCRYPTION_KEY, TEST_JWT_SECRET } from './helpers/env.ts';
import { asRole, createOrg, keyHeaders, type TestOrg } from './helpers/fixtures.ts';
import { issueApiKey } from '../src/modules/api-keys/service.ts';

const root = path.resolve(import.meta.dirname, '..');

/** Marks a key revoked in the database alone, as no API path does: a process that still accepts it is serving it from its cache. */
async function revokeBehindTheCache(keyId: string): Promise<void> {
  const { database } = await testEnv();
  await database.pool.query("UPDATE api_keys SET status = 'revoked' WHERE id = $1", [keyId]);
}

async function newKey(org: TestOrg, role: 'admin' | 'agent_manager' | 'user' = 'user') {
  const { database } = await testEnv();
  const { view, key } = await issueApiKey(database.db, org.orgId, { userId: org.userId, name: 'cached', role });
  return { id: view.key_id, key };
}

type Send = (key: string, org: TestOrg) => Promise<number>;

/** Uses a key until it has been served from memory (the listener of a server process connects on first use). */
async function warm(send: Send, org: TestOrg, key: string): Promise<void> {
  for (let i = 0; i < 15; i++) {
    assert.equal(await send(key, org), 200);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('credential cache: revocation on the very next request', () => {
  test('one process (the shared app): a cached key outlives a revocation made behind the cache, and dies with one made through the API', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const send: Send = async (key, o) => (await app.inject({ url: '/api/calls?limit=1', headers: keyHeaders(o, key) })).statusCode;

    const hidden = await newKey(org);
    await warm(send, org, hidden.key);
    await revokeBehindTheCache(hidden.id);
    assert.equal(await send(hidden.key, org), 200, 'served from the cache: the cache is in use');

    const revoked = await newKey(org);
    await warm(send, org, revoked.key);
    const res = await app.inject({ method: 'DELETE', url: `/api/api-keys/${revoked.id}`, headers: asRole(org, 'admin') });
    assert.equal(res.statusCode, 200);
    assert.equal(await send(revoked.key, org), 401);
  });
});

/** Two server processes on one PostgreSQL: only meaningful with DATABASE_URL (the embedded database has one server). */
describe('credential cache: two server processes on one PostgreSQL', { skip: process.env.DATABASE_URL ? false : 'needs DATABASE_URL (one server owns an embedded database)' }, () => {
  const servers: Array<{ child: ChildProcess; url: string }> = [];
  let org: TestOrg;

  async function startServer(): Promise<{ child: ChildProcess; url: string }> {
    const env = {
      ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', BOOTSTRAP: 'false', IN_PROCESS_WORKER: 'false',
      JWT_SECRET: TEST_JWT_SECRET, ENCRYPTION_KEY: TEST_ENCRYPTION_KEY.toString('base64'), DATA_DIR: path.join((await testEnv()).tmpDir, `srv-${servers.length}`),
    };
    const child = spawn(process.execPath, ['src/server.ts'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stderr!.on('data', (d) => (out += d));
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`server did not start:\n${out}`)), 30_000);
      child.stdout!.on('data', (d) => {
        out += d;
        const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
        if (match) {
          clearTimeout(timer);
          resolve(match[1]!);
        }
      });
      child.once('exit', () => reject(new Error(`server exited:\n${out}`)));
    });
    return { child, url };
  }

  const sendTo = (server: { url: string }): Send => async (key, o) =>
    (await fetch(`${server.url}/api/calls?limit=1`, { headers: keyHeaders(o, key) })).status;

  before(async () => {
    servers.push(await startServer(), await startServer());
    org = await createOrg();
  });
  after(async () => {
    for (const { child } of servers) child.kill('SIGTERM');
    await Promise.all(servers.map(({ child }) => new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)))));
  });

  test('both processes serve a key from memory (a revocation made behind the cache does not reach them)', async () => {
    const hidden = await newKey(org);
    for (const server of servers) await warm(sendTo(server), org, hidden.key);
    await revokeBehindTheCache(hidden.id);
    for (const server of servers) assert.equal(await sendTo(server)(hidden.key, org), 200);
  });

  test('a key revoked through one process is refused by the other on the very next request, twenty times over', async () => {
    for (let round = 0; round < 20; round++) {
      const [revoker, other] = round % 2 === 0 ? [servers[0]!, servers[1]!] : [servers[1]!, servers[0]!];
      const { id, key } = await newKey(org);
      await warm(sendTo(other), org, key);
      await warm(sendTo(revoker), org, key);
      const res = await fetch(`${revoker.url}/api/api-keys/${id}`, { method: 'DELETE', headers: asRole(org, 'admin') });
      assert.equal(res.status, 200);
      assert.equal(await sendTo(other)(key, org), 401, `round ${round}: the other process accepted a revoked key`);
      assert.equal(await sendTo(revoker)(key, org), 401);
    }
  });

  test('a revocation is answered only once the other process has cleared its cache (paused, it holds the answer back)', async () => {
    const [revoker, paused] = [servers[0]!, servers[1]!];
    const { id, key } = await newKey(org);
    await warm(sendTo(paused), org, key);
    paused.child.kill('SIGSTOP');
    let answered = false;
    const deletion = fetch(`${revoker.url}/api/api-keys/${id}`, { method: 'DELETE', headers: asRole(org, 'admin') }).then((res) => {
      answered = true;
      return res.status;
    });
    try {
      await new Promise((r) => setTimeout(r, 1_000));
      assert.equal(answered, false, 'the revocation answered while a process that caches the key had not cleared it');
    } finally {
      paused.child.kill('SIGCONT');
    }
    assert.equal(await deletion, 200);
    assert.equal(await sendTo(paused)(key, org), 401);
  });

  test('a process stalled past the liveness window is no longer waited for, and distrusts its cache when it resumes', async () => {
    const [revoker, stalled] = [servers[0]!, servers[1]!];
    const { id, key } = await newKey(org);
    await warm(sendTo(stalled), org, key);
    stalled.child.kill('SIGSTOP');
    try {
      const started = performance.now();
      const res = await fetch(`${revoker.url}/api/api-keys/${id}`, { method: 'DELETE', headers: asRole(org, 'admin') });
      assert.equal(res.status, 200);
      assert.ok(performance.now() - started < 14_000, 'answered once the stalled process fell out of the liveness window');
    } finally {
      stalled.child.kill('SIGCONT');
    }
    assert.equal(await sendTo(stalled)(key, org), 401);
  });

  test("a member demoted through one process loses their admin key in the other on the next request", async () => {
    const { database } = await testEnv();
    const member = `user_${Date.now().toString(16).slice(-12).padStart(12, '0')}`;
    await database.pool.query('INSERT INTO users (id, subject, email) VALUES ($1, NULL, $2)', [member, `${member}@example.test`]);
    await database.pool.query("INSERT INTO memberships (client_id, user_id, role) VALUES ($1, $2, 'admin')", [org.orgId, member]);
    const { key } = await issueApiKey(database.db, org.orgId, { userId: member, name: 'member admin key', role: 'admin' });
    await warm(sendTo(servers[1]!), org, key);
    const res = await fetch(`${servers[0]!.url}/api/auth/organizations/members/${member}`, {
      method: 'PATCH', headers: { ...asRole(org, 'admin'), 'content-type': 'application/json' }, body: JSON.stringify({ role: 'user' }),
    });
    assert.equal(res.status, 200, await res.text());
    assert.equal(await sendTo(servers[1]!)(key, org), 401);
  });
});
