import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { runAuthMatrix } from './helpers/auth-matrix.ts';
import { testEnv } from './helpers/env.ts';
import { asRole, createAgent, createOrg, type TestOrg } from './helpers/fixtures.ts';

const agentPath = async (org: TestOrg) => `/api/agents/${(await createAgent(org)).agent_id}`;
runAuthMatrix({ method: 'POST', route: '/api/agents', path: () => '/api/agents', body: () => ({ agent_name: 'm' }), permission: 'agents:create' });
runAuthMatrix({ method: 'GET', route: '/api/agents', path: () => '/api/agents', permission: 'agents:read' });
runAuthMatrix({ method: 'GET', route: '/api/agents/{agent_id}', path: agentPath, permission: 'agents:read', foreignStatus: 404 });
runAuthMatrix({ method: 'PATCH', route: '/api/agents/{agent_id}', path: agentPath, body: () => ({ agent_name: 'n' }), permission: 'agents:update', foreignStatus: 404 });
runAuthMatrix({ method: 'DELETE', route: '/api/agents/{agent_id}', path: agentPath, permission: 'agents:delete', foreignStatus: 404 });

describe('agents', () => {
  test('create with defaults; language stored uppercase; the full agent on get', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const agent = await createAgent(org, { language: 'en-us', system_prompt: 'Be brief.', recording_enabled: true });
    assert.match(agent.agent_id, /^agent_[a-f0-9]{12}$/);
    assert.equal(agent.language, 'EN-US');
    assert.equal(agent.stt_provider, 'deepgram');
    assert.equal(agent.tts_provider, 'elevenlabs');
    assert.equal(agent.llm_provider, 'openai');
    assert.equal(agent.llm_model, 'gpt-4o-mini');
    assert.equal(agent.temperature, 0.7);
    assert.equal(agent.max_call_duration_seconds, 1800);
    assert.equal(agent.recording_enabled, true);
    assert.equal(agent.client_id, org.orgId);
    assert.deepEqual([agent.tool_ids, agent.documentation_ids, agent.phone_number_ids], [[], [], []]);
    const got = await app.inject({ url: `/api/agents/${agent.agent_id}`, headers: asRole(org, 'user') });
    assert.deepEqual(got.json().data, agent);
  });

  test('providers are validated against the documented lists; models are free-form', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const bad = await app.inject({
      method: 'POST', url: '/api/agents', headers: asRole(org, 'admin'),
      payload: { agent_name: 'x', stt_provider: 'nope', tts_provider: 'nope', llm_provider: 'nope', temperature: 3, language: 'english' },
    });
    assert.equal(bad.statusCode, 400);
    const paths = new Set(bad.json().errors.map((e: any) => e.path));
    for (const p of ['body.stt_provider', 'body.tts_provider', 'body.llm_provider', 'body.temperature', 'body.language']) assert.ok(paths.has(p), p);
    const ok = await createAgent(org, { llm_provider: 'anthropic', llm_model: 'claude-any-model-name', tts_provider: 'cartesia', stt_provider: 'whisper' });
    assert.equal(ok.llm_model, 'claude-any-model-name');
  });

  test('patch changes only the fields given; an empty patch is refused', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const agent = await createAgent(org, { first_message: 'Hello!' });
    const res = await app.inject({
      method: 'PATCH', url: `/api/agents/${agent.agent_id}`, headers: asRole(org, 'agent_manager'), payload: { agent_name: 'Night desk', temperature: 0.2 },
    });
    assert.equal(res.statusCode, 200, res.body);
    const updated = res.json().data;
    assert.equal(updated.agent_name, 'Night desk');
    assert.equal(updated.temperature, 0.2);
    assert.equal(updated.first_message, 'Hello!');
    assert.ok(updated.updated_at >= agent.updated_at);
    const empty = await app.inject({ method: 'PATCH', url: `/api/agents/${agent.agent_id}`, headers: asRole(org, 'admin'), payload: {} });
    assert.equal(empty.statusCode, 400);
  });

  test("tool_ids must name the organization's tools and replace the set", async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const other = await createOrg();
    const tool = async (o: TestOrg, name: string) => (await app.inject({
      method: 'POST', url: '/api/tools', headers: asRole(o, 'admin'),
      payload: { tool_name: name, tool_description: 'd', webhook_url: 'https://example.com/hook', http_method: 'POST' },
    })).json().data.tool_id;
    const [a, b] = [await tool(org, 'lookup'), await tool(org, 'book')];
    const foreign = await tool(other, 'lookup');
    const agent = await createAgent(org, { tool_ids: [a] });
    assert.deepEqual(agent.tool_ids, [a]);
    const replaced = await app.inject({ method: 'PATCH', url: `/api/agents/${agent.agent_id}`, headers: asRole(org, 'admin'), payload: { tool_ids: [b] } });
    assert.deepEqual(replaced.json().data.tool_ids, [b]);
    const cross = await app.inject({ method: 'PATCH', url: `/api/agents/${agent.agent_id}`, headers: asRole(org, 'admin'), payload: { tool_ids: [foreign] } });
    assert.equal(cross.statusCode, 404);
    const unchanged = await app.inject({ url: `/api/agents/${agent.agent_id}`, headers: asRole(org, 'admin') });
    assert.deepEqual(unchanged.json().data.tool_ids, [b], 'a refused patch changes nothing');
  });

  test('list pages with total_count; delete returns {success, message}', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    for (let i = 0; i < 3; i++) await createAgent(org, { agent_name: `a${i}` });
    const first = (await app.inject({ url: '/api/agents?page_size=2', headers: asRole(org, 'user') })).json();
    assert.equal(first.pagination.total_count, 3);
    assert.equal(first.pagination.has_more, true);
    assert.deepEqual(first.data.map((a: any) => a.agent_name), ['a2', 'a1']);
    assert.equal(first.data[0].system_prompt, undefined, 'list items are summaries');
    const second = (await app.inject({ url: `/api/agents?page_size=2&cursor=${first.pagination.next_cursor}`, headers: asRole(org, 'user') })).json();
    assert.deepEqual(second.data.map((a: any) => a.agent_name), ['a0']);
    assert.equal(second.pagination.next_cursor, null);

    const del = await app.inject({ method: 'DELETE', url: `/api/agents/${first.data[0].agent_id}`, headers: asRole(org, 'admin') });
    assert.equal(del.statusCode, 200);
    assert.deepEqual(Object.keys(del.json()).sort(), ['message', 'success']);
    const gone = await app.inject({ url: `/api/agents/${first.data[0].agent_id}`, headers: asRole(org, 'admin') });
    assert.equal(gone.statusCode, 404);
  });
});
