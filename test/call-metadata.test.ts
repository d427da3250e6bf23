import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { testEnv } from './helpers/env.ts';
import { asRole, createAgent, createOrg, type TestOrg } from './helpers/fixtures.ts';

/** extensions.md §2: metadata is any JSON object of at most 16 KB; variables have string values, at most 50 keys. */
const LIMIT = 16 * 1024;

async function post(org: TestOrg, agentId: string, extra: Record<string, unknown>) {
  const { app } = await testEnv();
  return app.inject({
    method: 'POST', url: '/api/calls', headers: asRole(org, 'agent_manager'),
    payload: { agent_id: agentId, call_type: 'outbound', to_number: '+14155550100', ...extra },
  });
}

/** A metadata object whose JSON text is exactly `bytes` bytes long (counted here, independently of the server). */
function metadataOfBytes(bytes: number): Record<string, unknown> {
  const skeleton = JSON.stringify({ note: '' }).length;
  const value = 'é'.repeat(Math.floor((bytes - skeleton) / 2)) + 'x'.repeat((bytes - skeleton) % 2);
  const made = { note: value };
  assert.equal(Buffer.byteLength(JSON.stringify(made), 'utf8'), bytes);
  return made;
}

describe('calls: metadata and variables', () => {
  test('stored on create and returned by GET as given; {} when left out', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const agentId = (await createAgent(org)).agent_id;
    const metadata = { crm_id: 'lead-4711', nested: { list: [1, 'two', null, true], price: 12.5 }, empty: {} };
    const variables = { customer_name: 'Ada Lovelace', appointment: 'Tuesday <10:00> & "soon"' };
    const created = await post(org, agentId, { metadata, variables });
    assert.equal(created.statusCode, 200, created.body);
    assert.deepEqual(created.json().data.metadata, metadata);
    assert.deepEqual(created.json().data.variables, variables);
    const got = await app.inject({ url: `/api/calls/${created.json().data.call_sid}`, headers: asRole(org, 'user') });
    assert.deepEqual([got.json().data.metadata, got.json().data.variables], [metadata, variables]);

    const bare = await post(org, agentId, {});
    assert.equal(bare.statusCode, 200, bare.body);
    const plain = await app.inject({ url: `/api/calls/${bare.json().data.call_sid}`, headers: asRole(org, 'user') });
    assert.deepEqual([plain.json().data.metadata, plain.json().data.variables], [{}, {}]);
  });

  test('metadata of exactly 16 KB is accepted, one byte more is 400 naming body.metadata', async () => {
    const org = await createOrg();
    const agentId = (await createAgent(org)).agent_id;
    const atLimit = await post(org, agentId, { metadata: metadataOfBytes(LIMIT) });
    assert.equal(atLimit.statusCode, 200, atLimit.body.slice(0, 300));
    const over = await post(org, agentId, { metadata: metadataOfBytes(LIMIT + 1) });
    assert.equal(over.statusCode, 400);
    assert.equal(over.json().code, 'validation_error');
    assert.deepEqual(over.json().errors.map((e: { path: string }) => e.path), ['body.metadata']);
  });

  test('metadata that is not an object, and variables that break the rules, are 400 naming the field', async () => {
    const org = await createOrg();
    const agentId = (await createAgent(org)).agent_id;
    for (const metadata of [['a'], 'text', 3, null]) {
      const res = await post(org, agentId, { metadata });
      assert.equal(res.statusCode, 400, `metadata ${JSON.stringify(metadata)}`);
      assert.ok(res.json().errors.some((e: { path: string }) => e.path.startsWith('body.metadata')), res.body);
    }
    const fiftyOne = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v']));
    const fifty = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, 'v']));
    assert.equal((await post(org, agentId, { variables: fifty })).statusCode, 200);
    // JSON bodies are taken as sent (no coercion): a variable is text, a number is refused, not stored as its text.
    for (const variables of [fiftyOne, { nested: { a: 'b' } }, { '': 'empty name' }, ['x'], { n: 1 }, { flag: true }]) {
      const res = await post(org, agentId, { variables });
      assert.equal(res.statusCode, 400, `variables ${JSON.stringify(variables).slice(0, 60)}`);
      assert.ok(res.json().errors.some((e: { path: string }) => e.path.startsWith('body.variables')), res.body);
    }
  });
});
