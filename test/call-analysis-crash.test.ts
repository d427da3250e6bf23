import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { describe, test } from 'node:test';
import { CALL_ANALYSIS, CALL_ANALYSIS_BATCH } from '../src/modules/calls/analysis/jobs.ts';
import { TEST_ENCRYPTION_KEY, testEnv } from './helpers/env.ts';
import { asRole } from './helpers/fixtures.ts';
import { balanceOf, finishedCall } from './helpers/calls.ts';
import { ANALYSIS, GRANT, TRANSCRIPT, getCall, setup, waitFor } from './helpers/analysis.ts';
import { exited, spawnWorker, workerDatabaseUrl } from './helpers/workers.ts';

/**
 * extensions.md §13, issue 32: analysis stored once "under job retries and a worker SIGKILLed
 * mid-batch". Two `switchboard worker` processes in turn work a bulk rerun against the LLM
 * stand-in (300 ms before its first token, so analyses are in flight when the first is killed).
 */
const CALLS = 12;
const CALL_COST = { stt: 0.25, llm: 0.5, tts: 1, telephony: 1.5, platform: 0 };
const CALL_TOTAL = 3.25;
// README, "Prices": the default LLM prices per 1k input and output tokens.
const round4 = (n: number) => Math.round(n * 10_000) / 10_000;
const costOf = ([input, output]: [number, number]) => round4((input / 1000) * 0.05 + (output / 1000) * 0.2);
const VALID = { summary: 'Booked for four.', success: true, success_reason: 'A booking.', sentiment: 'positive', structured_data: { booked: true, party_size: 4 } };

describe('post-call analysis: a `switchboard worker` killed with SIGKILL mid-batch', () => {
  test('every call is analyzed, charged and emitted once', async () => {
    const env = await testEnv();
    const { database, queue, tmpDir } = env;
    const names = [CALL_ANALYSIS.name, CALL_ANALYSIS_BATCH.name];
    for (const name of names) await queue.boss.offWork(name);
    const workerEnv = {
      DATABASE_URL: workerDatabaseUrl(database), DATA_DIR: path.join(tmpDir, 'analysis-worker'), LOG_LEVEL: 'silent',
      ENCRYPTION_KEY: TEST_ENCRYPTION_KEY.toString('base64'), ALLOWED_NETWORKS: '127.0.0.2/32',
      JOB_SUPERVISE_SECONDS: '1', JOB_EXPIRE_SECONDS: '4', JOB_RETRY_LIMIT: '2',
    };
    const children: ChildProcess[] = [];
    try {
      const { org, llm, agentId } = await setup({ ...ANALYSIS, enabled: false }, { firstTokenMs: 300 });
      llm.script.push(...Array.from({ length: 4 * CALLS }, () => ({ text: JSON.stringify(VALID) })));
      const calls = [];
      for (let i = 0; i < CALLS; i++) calls.push(await finishedCall(org, agentId, { transcript: TRANSCRIPT, cost_breakdown: CALL_COST }));
      const started = await env.app.inject({ method: 'POST', url: '/api/calls/analyze', headers: asRole(org, 'admin'), payload: { agent_id: agentId } });
      assert.equal(started.statusCode, 200, started.body);
      const jobId = started.json().data.job_id;
      const progress = async () => (await env.app.inject({ url: `/api/calls/analyze/${jobId}`, headers: asRole(org, 'admin') })).json().data;

      children.push(spawnWorker(workerEnv));
      // A worker starts slowly on a busy machine.
      await waitFor('the first worker analyzed nothing', async () => ((await progress()).completed >= 2 ? true : undefined), 180);
      children[0]!.kill('SIGKILL');
      await exited(children[0]!);
      const before = await progress();
      assert.ok(before.completed < CALLS, `the first worker was stopped mid-batch (${before.completed} of ${CALLS})`);

      children.push(spawnWorker(workerEnv));
      const done = await waitFor('the batch did not complete', async () => {
        const now = await progress();
        return now.status === 'completed' ? now : undefined;
      }, 240);
      assert.deepEqual([done.total, done.completed, done.failed, done.pending], [CALLS, CALLS, 0, 0]);
      await new Promise((r) => setTimeout(r, 1500)); // a duplicate would show by now

      const chats = llm.usage;
      assert.ok(chats.length >= CALLS, 'every call was asked about');
      assert.ok(chats.every((u) => u[0] === chats[0]![0] && u[1] === chats[0]![1]), 'the same question and answer each time');
      const cost = costOf(chats[0]!);
      for (const call of calls) {
        const seen = await getCall(org, call.call_sid);
        assert.equal(seen.analysis.status, 'completed');
        assert.equal(seen.cost_breakdown.analysis, cost, call.call_sid);
        const { rows: ledger } = await database.pool.query(`SELECT amount FROM credit_transactions WHERE client_id = $1 AND source_id LIKE $2`, [org.orgId, `${call.call_sid}/analysis/%`]);
        assert.deepEqual(ledger.map((r) => Number(r.amount)), [-cost], call.call_sid);
        const { rows: events } = await database.pool.query(`SELECT count(*)::int AS n FROM events WHERE client_id = $1 AND type = 'call.analyzed' AND data->>'call_sid' = $2`, [org.orgId, call.call_sid]);
        assert.equal(events[0].n, 1, call.call_sid);
      }
      assert.equal(await balanceOf(org.orgId), round4(GRANT - CALLS * CALL_TOTAL - CALLS * cost));
    } finally {
      for (const child of children) child.kill('SIGTERM');
      await Promise.all(children.map(exited));
      await queue.work(env.services.jobs.filter((unit) => names.includes(unit.name)));
    }
  });
});
