import assert from 'node:assert/strict';
import { test } from 'node:test';
import { testEnv } from './helpers/env.ts';
import { asRole, createAgent, createOrg } from './helpers/fixtures.ts';

/**
 * extensions.md §12: a restore is one change. While it runs, calls are created and the agent is read
 * concurrently: every reader sees the agent wholly before (version 3, its settings) or wholly after
 * (version 4, version 1's settings), never a mix; every call records a version that exists, the one
 * current when it was created; the calls created after the restore answered all record version 4.
 */
test('a restore is atomic while calls are created and the agent is read concurrently', { timeout: 60_000 }, async () => {
  const { app } = await testEnv();
  const org = await createOrg();
  const admin = asRole(org, 'admin');
  const agent = await createAgent(org, { system_prompt: 'First prompt.', temperature: 0.3 });
  for (const payload of [{ system_prompt: 'Second prompt.', temperature: 0.9 }, { system_prompt: 'Third prompt.', temperature: 1.5 }]) {
    const res = await app.inject({ method: 'PATCH', url: `/api/agents/${agent.agent_id}`, headers: admin, payload });
    assert.equal(res.statusCode, 200, res.body);
  }
  const expected = new Map([[3, ['Third prompt.', 1.5]], [4, ['First prompt.', 0.3]]]);

  const seen: Array<[number, string, number]> = [];
  let restoring = true;
  const reader = (async () => {
    while (restoring) {
      const now = (await app.inject({ url: `/api/agents/${agent.agent_id}`, headers: admin })).json().data;
      seen.push([now.version, now.system_prompt, now.temperature]);
    }
  })();
  const createCall = (i: number) => app.inject({
    method: 'POST', url: '/api/calls', headers: admin,
    payload: { agent_id: agent.agent_id, call_type: 'inbound', to_number: '+14155550100', from_number: `+1415555${String(1000 + i)}` },
  });
  const during = [0, 1, 2, 3].map(createCall);
  const restore = app.inject({ method: 'POST', url: `/api/agents/${agent.agent_id}/versions/1/restore`, headers: { ...admin, 'content-type': 'application/json' } });
  during.push(...[4, 5].map(createCall));
  const restored = await restore;
  assert.equal(restored.statusCode, 200, restored.body);
  assert.equal(restored.json().data.version, 4);
  const after = await Promise.all([6, 7].map(createCall));
  restoring = false;
  await reader;

  assert.ok(seen.length > 1 && seen.some(([version]) => version === 4), `reads: ${JSON.stringify(seen)}`);
  for (const [version, prompt, temperature] of seen) {
    assert.deepEqual([prompt, temperature], expected.get(version), `the agent read at version ${version} showed ${prompt} / ${temperature}`);
  }
  for (const res of [...(await Promise.all(during)), ...after]) assert.equal(res.statusCode, 200, res.body);
  const versions = (await Promise.all(during)).map((res) => res.json().data.agent_version as number);
  assert.ok(versions.every((v) => v === 3 || v === 4), `calls during the restore: ${versions}`);
  assert.deepEqual(after.map((res) => res.json().data.agent_version), [4, 4], 'calls after the restore answered');

  const listed = (await app.inject({ url: `/api/agents/${agent.agent_id}/versions`, headers: admin })).json().data;
  assert.deepEqual(listed.map((v: { version: number }) => v.version), [4, 3, 2, 1], 'one version for the restore, none lost or doubled');
  const [v4, , , v1] = listed;
  assert.deepEqual(v4.config, v1.config, "version 4 is version 1's settings");
});
