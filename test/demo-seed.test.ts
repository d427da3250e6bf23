import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { TEST_ENCRYPTION_KEY, TEST_JWT_SECRET, testEnv, buildTestApp } from './helpers/env.ts';
import { asRole, createOrg } from './helpers/fixtures.ts';
import { grantCredits } from './helpers/calls.ts';

const run = promisify(execFile);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

describe('switchboard demo:seed', () => {
  let server: FastifyInstance;
  let url: string;
  before(async () => {
    const { config, database } = await testEnv();
    server = await buildTestApp(config);
    url = await server.listen({ host: '127.0.0.1', port: 0 });
  });
  after(() => server?.close());

  test('fills an organization through the public API: agents, number, tool, document and finished calls with recordings', async () => {
    const org = await createOrg();
    await grantCredits(org.orgId, 1_000_000);
    const { stdout, stderr } = await run(process.execPath, ['src/cli.ts', 'demo:seed', '--url', url, '--api-key', org.keys.agent_manager, '--org', org.orgId, '--calls', '12'], { cwd: root });
    assert.deepEqual(JSON.parse(stdout).calls, 12);
    assert.match(stderr, /calls: 12\/12/);

    const { app } = await testEnv();
    const headers = asRole(org, 'user');
    const calls = (await app.inject({ url: '/api/calls?limit=100', headers })).json().data;
    assert.equal(calls.length, 12);
    assert.ok(calls.every((c: { status: string; billing_status: string }) => ['completed', 'failed'].includes(c.status) && c.billing_status === 'billed'));
    const recorded = calls.filter((c: { recording_enabled: boolean }) => c.recording_enabled);
    assert.equal(recorded.length, 8);
    const detail = (await app.inject({ url: `/api/calls/${recorded[0].call_sid}`, headers })).json().data;
    assert.ok(detail.transcript.length >= 4 && detail.has_recording && detail.cost_breakdown.platform === 0.5);
    const download = await app.inject({ url: `/api/calls/${recorded[0].call_sid}/recording/download`, headers });
    assert.equal(download.rawPayload.toString('latin1', 0, 4), 'RIFF');
    const series = (await app.inject({ url: '/api/analytics/calls/daily', headers })).json().data.daily;
    assert.equal(series.reduce((n: number, p: { calls: number }) => n + p.calls, 0), 12);
    for (const list of ['agents', 'phone-numbers', 'tools', 'knowledge-base']) {
      assert.ok((await app.inject({ url: `/api/${list}`, headers })).json().data.length >= 1, list);
    }
  });

  test('refuses without its options', async () => {
    const result = await run(process.execPath, ['src/cli.ts', 'demo:seed', '--url', url], { cwd: root }).catch((e) => e);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /--api-key is required/);
  });
});
