import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';
import { runAuthMatrix } from './helpers/auth-matrix.ts';
import { testEnv } from './helpers/env.ts';
import { asRole, createAgent, createOrg, type TestOrg } from './helpers/fixtures.ts';
import { createCall, patchCall } from './helpers/calls.ts';
import { setConcurrencyLimit } from './helpers/limits.ts';
import { openDatabase } from '../src/db/database.ts';

/** extensions.md §6: each organization has max_concurrent_calls (default 10); calls not yet final count as active. */
const DEFAULT_LIMIT = 10;

runAuthMatrix({ method: 'GET', route: '/api/limits', path: () => '/api/limits', permission: 'limits:read' });

async function limitsOf(org: TestOrg) {
  const { app } = await testEnv();
  const res = await app.inject({ url: '/api/limits', headers: asRole(org, 'user') });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data;
}

async function countCalls(orgId: string): Promise<number> {
  const { database } = await testEnv();
  const { rows } = await database.pool.query('SELECT count(*)::int AS n FROM calls WHERE client_id = $1', [orgId]);
  return rows[0].n;
}

function postCall(org: TestOrg, agentId: string) {
  return testEnv().then(({ app }) => app.inject({
    method: 'POST', url: '/api/calls', headers: asRole(org, 'agent_manager'),
    payload: { agent_id: agentId, call_type: 'inbound', to_number: '+14155550100' },
  }));
}

describe('concurrency limits', () => {
  test('GET /api/limits: the default limit, the active calls (not yet final) and the rate limit of the configuration', async () => {
    const { config } = await testEnv();
    const org = await createOrg();
    const agentId = (await createAgent(org)).agent_id;
    assert.deepEqual(await limitsOf(org), { max_concurrent_calls: DEFAULT_LIMIT, active_calls: 0, rate_limit_per_minute: config.rateLimit.perMinute });
    const calls = [await createCall(org, agentId), await createCall(org, agentId, { status: 'ringing' }), await createCall(org, agentId, { status: 'in_progress' })];
    assert.equal((await limitsOf(org)).active_calls, 3);
    assert.equal((await patchCall(org, calls[1].call_sid, { status: 'no_answer' })).statusCode, 200);
    assert.equal((await limitsOf(org)).active_calls, 2);
    const other = await createOrg();
    assert.equal((await limitsOf(other)).active_calls, 0, "another organization's calls are not counted");
  });

  test('50 concurrent creations against a limit of 10 create exactly 10; the others are 429 concurrency_limit with Retry-After', async () => {
    const org = await createOrg();
    const agentId = (await createAgent(org)).agent_id;
    assert.equal((await limitsOf(org)).max_concurrent_calls, 10);
    const answers = await Promise.all(Array.from({ length: 50 }, () => postCall(org, agentId)));
    const statuses = answers.map((r) => r.statusCode);
    assert.equal(statuses.filter((s) => s === 200).length, 10, `statuses: ${statuses.join(',')}`);
    for (const refused of answers.filter((r) => r.statusCode !== 200)) {
      assert.equal(refused.statusCode, 429);
      assert.equal(refused.json().code, 'concurrency_limit');
      assert.equal(typeof refused.json().detail, 'string');
      assert.match(String(refused.headers['retry-after']), /^[1-9]\d*$/);
    }
    assert.equal(await countCalls(org.orgId), 10);
    assert.equal((await limitsOf(org)).active_calls, 10);

    // A call that ends frees its slot for exactly one more.
    const sid = answers.find((r) => r.statusCode === 200)!.json().data.call_sid;
    assert.equal((await patchCall(org, sid, { status: 'completed', end_reason: 'user_hangup' })).statusCode, 200);
    const next = await Promise.all([postCall(org, agentId), postCall(org, agentId)]);
    assert.deepEqual(next.map((r) => r.statusCode).sort(), [200, 429]);
    assert.equal(await countCalls(org.orgId), 11);
  });

  test("one organization at its limit does not hold back another's calls; a limit of 0 admits none", async () => {
    const [full, free] = [await createOrg(), await createOrg()];
    await setConcurrencyLimit(full.orgId, 0);
    const refused = await postCall(full, (await createAgent(full)).agent_id);
    assert.equal(refused.statusCode, 429);
    assert.equal(refused.json().code, 'concurrency_limit');
    assert.equal((await postCall(free, (await createAgent(free)).agent_id)).statusCode, 200);
    assert.deepEqual([await countCalls(full.orgId), await countCalls(free.orgId)], [0, 1]);
  });

  test('switchboard org:limits --org ID --max-concurrent-calls N sets the limit; bad values and unknown organizations are refused', { timeout: 600_000 }, async () => {
    const root = path.resolve(import.meta.dirname, '..');
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sbl-'));
    const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' };
    const cli = (...args: string[]) => promisify(execFile)(process.execPath, ['src/cli.ts', ...args], { cwd: root, env });
    try {
      // On PostgreSQL the CLI works on the suite's database; embedded, on a data directory of its own.
      const orgId = process.env.DATABASE_URL ? (await createOrg()).orgId : JSON.parse((await cli('org:create', '--name', 'Limits')).stdout).organization_id;
      const set = JSON.parse((await cli('org:limits', '--org', orgId, '--max-concurrent-calls', '3')).stdout);
      assert.deepEqual(set, { organization_id: orgId, max_concurrent_calls: 3 });
      for (const [args, message] of [
        [['--org', orgId, '--max-concurrent-calls', '-1'], /max-concurrent-calls/],
        [['--org', orgId, '--max-concurrent-calls', '2.5'], /max-concurrent-calls/],
        [['--org', orgId], /--max-concurrent-calls is required/],
        [['--org', 'org_000000000000', '--max-concurrent-calls', '5'], /not found/i],
      ] as const) {
        const failed = await cli('org:limits', ...args).then(() => undefined, (e: { code: number; stderr: string }) => e);
        assert.ok(failed, `org:limits ${args.join(' ')} must fail`);
        assert.equal(failed.code, 2);
        assert.match(failed.stderr, message);
      }
      if (process.env.DATABASE_URL) {
        const { database } = await testEnv();
        const { rows } = await database.pool.query('SELECT max_concurrent_calls FROM organizations WHERE id = $1', [orgId]);
        assert.equal(rows[0].max_concurrent_calls, 3);
      } else {
        const database = await openDatabase({ databaseUrl: undefined, dataDir, poolSize: 1 });
        try {
          const { rows } = await database.pool.query('SELECT max_concurrent_calls FROM organizations WHERE id = $1', [orgId]);
          assert.equal(rows[0].max_concurrent_calls, 3);
        } finally {
          await database.close();
        }
      }
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
