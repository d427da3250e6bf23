import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { testEnv } from './helpers/env.ts';
import { asRole, createAgent, createOrg, type TestOrg } from './helpers/fixtures.ts';

async function patch(org: TestOrg, agentId: string, payload: Record<string, unknown>) {
  const { app } = await testEnv();
  return app.inject({ method: 'PATCH', url: `/api/agents/${agentId}`, headers: asRole(org, 'agent_manager'), payload });
}

const BOOKING_SCHEMA = { type: 'object', properties: { booked: { type: 'boolean' }, date: { type: 'string' } }, required: ['booked'] };

describe("an agent's analysis settings (extensions.md §13)", () => {
  test('saved with the agent, part of its versions: diffed and restored like any field', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const plain = await createAgent(org);
    assert.equal(plain.analysis, null);
    const analysis = { enabled: true, summary_prompt: 'Two sentences.', success_criteria: 'A booking was made.', structured_data_schema: BOOKING_SCHEMA };
    const agent = await createAgent(org, { analysis });
    assert.deepEqual(agent.analysis, analysis);
    const v1 = (await app.inject({ url: `/api/agents/${agent.agent_id}/versions/1`, headers: asRole(org, 'user') })).json().data;
    assert.deepEqual(v1.config.analysis, analysis);

    const changed = { ...analysis, summary_prompt: 'One sentence.' };
    const res = await patch(org, agent.agent_id, { analysis: changed });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().data.version, 2);
    const diff = (await app.inject({ url: `/api/agents/${agent.agent_id}/versions/2/diff?against=1`, headers: asRole(org, 'user') })).json().data;
    assert.deepEqual(diff.changes, [{ field: 'analysis', from: analysis, to: changed }]);
    const restored = await app.inject({ method: 'POST', url: `/api/agents/${agent.agent_id}/versions/1/restore`, headers: asRole(org, 'admin') });
    assert.deepEqual([restored.json().data.version, restored.json().data.analysis], [3, analysis]);
  });

  test('structured_data_schema must be a valid JSON Schema of an object, at most 16 KB; a refused one makes no version', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const agent = await createAgent(org);
    const cases: Array<[string, unknown]> = [
      ['an unknown type', { type: 'object', properties: { booked: { type: 'yesno' } } }],
      ['a required list that is no list', { type: 'object', required: 'booked' }],
      ['not an object', { type: 'string' }],
      // 16 KB = 16,384 bytes as JSON: one byte over.
      ['over 16 KB', { type: 'object', description: 'x'.repeat(16_384 - JSON.stringify({ type: 'object', description: '' }).length + 1) }],
    ];
    for (const [label, schema] of cases) {
      const res = await patch(org, agent.agent_id, { analysis: { enabled: true, structured_data_schema: schema } });
      assert.equal(res.statusCode, 400, `${label}: ${res.body}`);
      assert.equal(res.json().errors[0].path, 'body.analysis.structured_data_schema', label);
    }
    const exactly = { type: 'object', description: 'x'.repeat(16_384 - JSON.stringify({ type: 'object', description: '' }).length) };
    assert.equal(Buffer.byteLength(JSON.stringify(exactly)), 16_384);
    assert.equal((await patch(org, agent.agent_id, { analysis: { enabled: true, structured_data_schema: exactly } })).statusCode, 200);
    const versions = (await app.inject({ url: `/api/agents/${agent.agent_id}/versions`, headers: asRole(org, 'user') })).json().data;
    assert.deepEqual(versions.map((v: any) => v.version), [2, 1], 'only the accepted change made a version');
    const created = await app.inject({ method: 'POST', url: '/api/agents', headers: asRole(org, 'admin'), payload: { agent_name: 'x', analysis: { enabled: true, structured_data_schema: { type: 'nope' } } } });
    assert.equal(created.statusCode, 400);
  });
});
