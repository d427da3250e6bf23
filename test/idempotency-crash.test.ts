import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { after, describe, test } from 'node:test';
import { testEnv } from './helpers/env.ts';
import { asRole, createOrg, type TestOrg } from './helpers/fixtures.ts';
import { exited, workerDatabaseUrl } from './helpers/workers.ts';

const children: ChildProcess[] = [];
after(() => children.forEach((child) => child.kill('SIGKILL')));

/** test/helpers/crash-server.ts: the real server over this test's database, killing itself at `point`. */
async function startServer(point: string): Promise<{ url: string; child: ChildProcess; output: () => string }> {
  const { database } = await testEnv();
  const child = spawn(process.execPath, ['--import', './src/module-hooks.ts', 'test/helpers/crash-server.ts', point], {
    env: { ...process.env, CRASH_SERVER_DATABASE_URL: workerDatabaseUrl(database) }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  child.stderr!.on('data', (d) => (out += d));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      out += d;
      const match = /listening (http:\/\/\S+)/.exec(out);
      if (match) resolve(match[1]!);
    });
    child.once('exit', () => reject(new Error(`the server exited before listening:\n${out}`)));
  });
  return { url, child, output: () => out };
}

function createAgent(url: string, org: TestOrg, key: string, name: string): Promise<Response> {
  return fetch(`${url}/api/agents`, {
    method: 'POST', body: JSON.stringify({ agent_name: name }),
    headers: { ...asRole(org, 'agent_manager', { 'idempotency-key': key }), 'content-type': 'application/json' },
  });
}

async function agentsNamed(org: TestOrg, name: string): Promise<Array<{ id: string }>> {
  const { database } = await testEnv();
  const { rows } = await database.pool.query('SELECT id FROM agents WHERE client_id = $1 AND agent_name = $2', [org.orgId, name]);
  return rows;
}

/** Sends the write to a server that dies at `point`: the client never gets an answer. */
async function writeAndCrash(point: string, org: TestOrg, key: string, name: string): Promise<void> {
  const { url, child, output } = await startServer(point);
  await assert.rejects(createAgent(url, org, key, name).then(async (r) => `${r.status} ${await r.text()}\n${output()}`).then((answer) => {
    throw new assert.AssertionError({ message: `the server answered: ${answer}` });
  }), (err: Error) => !(err instanceof assert.AssertionError), 'the server died before answering');
  await exited(child);
  assert.equal(child.signalCode, 'SIGKILL');
}

describe('Idempotency-Key across a crash (kill -9 of the server process)', () => {
  test('killed right after the change committed, before answering: the retry replays its response, one agent exists', async () => {
    const org = await createOrg();
    const key = `crash-after-${Date.now()}`;
    await writeAndCrash('after-commit', org, key, 'Committed before the crash');
    const committed = await agentsNamed(org, 'Committed before the crash');
    assert.equal(committed.length, 1, 'the change committed before the crash');

    const { url, output } = await startServer('none');
    const retry = await createAgent(url, org, key, 'Committed before the crash');
    assert.equal(retry.status, 200, `${await retry.clone().text()}\n${output()}`);
    assert.equal(retry.headers.get('idempotent-replayed'), 'true');
    const body = await retry.json() as { data: { agent_id: string; agent_name: string } };
    assert.equal(body.data.agent_id, committed[0]!.id, 'the replayed response names the agent that was created');
    assert.equal(body.data.agent_name, 'Committed before the crash');
    assert.equal((await agentsNamed(org, 'Committed before the crash')).length, 1);
  });

  test('killed just before the COMMIT: nothing is left, and a retry runs once (after the dead request\'s lease)', async () => {
    const org = await createOrg();
    const key = `crash-before-${Date.now()}`;
    await writeAndCrash('before-commit', org, key, 'Rolled back by the crash');
    assert.equal((await agentsNamed(org, 'Rolled back by the crash')).length, 0, 'nothing committed');

    const { url } = await startServer('none');
    // The dead request's key blocks retries (409 in use) only until its lease (15 s) lapses.
    const deadline = Date.now() + 45_000;
    let retry: Response;
    for (;;) {
      retry = await createAgent(url, org, key, 'Rolled back by the crash');
      if (retry.status !== 409 || Date.now() > deadline) break;
      assert.equal((await retry.json() as { code: string }).code, 'idempotency_key_in_use');
      await new Promise((r) => setTimeout(r, 1000));
    }
    assert.equal(retry.status, 200, await retry.clone().text());
    assert.equal(retry.headers.get('idempotent-replayed'), null, 'the retry ran');
    const again = await createAgent(url, org, key, 'Rolled back by the crash');
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal((await agentsNamed(org, 'Rolled back by the crash')).length, 1);
  });
});
