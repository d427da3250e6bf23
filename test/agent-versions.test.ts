import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { newCallSid } from '../src/core/ids.ts';
import { runAuthMatrix } from './helpers/auth-matrix.ts';
import { createCall, finishedCall } from './helpers/calls.ts';
import { testEnv } from './helpers/env.ts';
import { asRole, createAgent, createOrg, type TestOrg } from './helpers/fixtures.ts';
import { transaction } from '../src/db/unit-of-work.ts';

const versionsPath = async (org: TestOrg, suffix = '') => `/api/agents/${(await createAgent(org)).agent_id}/versions${suffix}`;
runAuthMatrix({ method: 'GET', route: '/api/agents/{agent_id}/versions', path: (org) => versionsPath(org), permission: 'agents:read', foreignStatus: 404 });
runAuthMatrix({ method: 'GET', route: '/api/agents/{agent_id}/versions/{version}', path: (org) => versionsPath(org, '/1'), permission: 'agents:read', foreignStatus: 404 });
runAuthMatrix({ method: 'GET', route: '/api/agents/{agent_id}/versions/{version}/diff', path: (org) => versionsPath(org, '/1/diff?against=1'), permission: 'agents:read', foreignStatus: 404 });
runAuthMatrix({ method: 'POST', route: '/api/agents/{agent_id}/versions/{version}/restore', path: (org) => versionsPath(org, '/1/restore'), permission: 'agents:update', foreignStatus: 404 });

async function patch(org: TestOrg, agentId: string, payload: Record<string, unknown>) {
  const { app } = await testEnv();
  return app.inject({ method: 'PATCH', url: `/api/agents/${agentId}`, headers: asRole(org, 'agent_manager'), payload });
}

async function get(org: TestOrg, url: string) {
  const { app } = await testEnv();
  return app.inject({ url, headers: asRole(org, 'user') });
}

/** Every version of the agent, walking the cursor pages (newest first). */
async function allVersions(org: TestOrg, agentId: string, pageSize: number) {
  const versions = [];
  let cursor: string | null = null;
  do {
    const res = await get(org, `/api/agents/${agentId}/versions?page_size=${pageSize}${cursor ? `&cursor=${cursor}` : ''}`);
    assert.equal(res.statusCode, 200, res.body);
    versions.push(...res.json().data);
    cursor = res.json().pagination.next_cursor;
  } while (cursor);
  return versions;
}

describe('agent versions (extensions.md §12)', () => {
  test('10 concurrent PATCHes make versions 1..11, each once, each the configuration its PATCH left', async () => {
    const org = await createOrg();
    const agent = await createAgent(org, { system_prompt: 'v1' });
    assert.equal(agent.version, 1);
    const names = Array.from({ length: 10 }, (_, i) => `Concurrent ${i}`);
    const results = await Promise.all(names.map((agent_name) => patch(org, agent.agent_id, { agent_name })));
    for (const res of results) assert.equal(res.statusCode, 200, res.body);
    // Each PATCH answered a distinct version, 2..11.
    assert.deepEqual(results.map((r) => r.json().data.version).sort((a, b) => a - b), [2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    const versions = await allVersions(org, agent.agent_id, 3);
    assert.deepEqual(versions.map((v) => v.version), [11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1]);
    // The version a PATCH answered holds that PATCH's name; the latest is the agent as it is now.
    for (const res of results) {
      const answered = res.json().data;
      assert.equal(versions.find((v) => v.version === answered.version).config.agent_name, answered.agent_name);
    }
    assert.deepEqual(new Set(versions.slice(0, 10).map((v) => v.config.agent_name)), new Set(names));
    const now = (await get(org, `/api/agents/${agent.agent_id}`)).json().data;
    assert.equal(now.version, 11);
    assert.equal(now.agent_name, versions[0].config.agent_name);
    assert.equal(versions[10].config.system_prompt, 'v1');
    assert.equal(versions[10].created_by, org.userId);
  });

  test('get, diff against another version, restore (a new version equal to the old one; audited; agent.updated)', async () => {
    const { app, database } = await testEnv();
    const org = await createOrg();
    const agent = await createAgent(org, { system_prompt: 'Greet warmly.', temperature: 0.4, first_message: 'Hello!' });
    await patch(org, agent.agent_id, { system_prompt: 'Be terse.', temperature: 1.1 });
    await patch(org, agent.agent_id, { agent_name: 'Desk', first_message: null });
    const v1 = (await get(org, `/api/agents/${agent.agent_id}/versions/1`)).json().data;
    assert.deepEqual([v1.agent_id, v1.version, v1.config.system_prompt, v1.config.temperature, v1.config.first_message], [agent.agent_id, 1, 'Greet warmly.', 0.4, 'Hello!']);
    // The config is every editable field of the agent as it was: the agent created is version 1.
    for (const [field, value] of Object.entries(v1.config)) assert.deepEqual(value, agent[field], field);

    const diff = await get(org, `/api/agents/${agent.agent_id}/versions/3/diff?against=1`);
    assert.equal(diff.statusCode, 200, diff.body);
    const changes = diff.json().data.changes;
    const byField = Object.fromEntries(changes.map((c: any) => [c.field, [c.from, c.to]]));
    assert.deepEqual(byField, {
      agent_name: ['Receptionist', 'Desk'], system_prompt: ['Greet warmly.', 'Be terse.'], first_message: ['Hello!', null], temperature: [0.4, 1.1],
    });
    assert.deepEqual((await get(org, `/api/agents/${agent.agent_id}/versions/3/diff?against=3`)).json().data.changes, []);
    assert.equal((await get(org, `/api/agents/${agent.agent_id}/versions/3/diff?against=9`)).statusCode, 404);
    assert.equal((await get(org, `/api/agents/${agent.agent_id}/versions/9`)).statusCode, 404);

    const eventsBefore = (await database.pool.query(`SELECT count(*)::int AS n FROM events WHERE client_id = $1 AND type = 'agent.updated'`, [org.orgId])).rows[0].n;
    const restored = await app.inject({ method: 'POST', url: `/api/agents/${agent.agent_id}/versions/1/restore`, headers: asRole(org, 'agent_manager') });
    assert.equal(restored.statusCode, 200, restored.body);
    const data = restored.json().data;
    assert.equal(data.version, 4);
    assert.deepEqual([data.agent_name, data.system_prompt, data.temperature, data.first_message], ['Receptionist', 'Greet warmly.', 0.4, 'Hello!']);
    const v4 = (await get(org, `/api/agents/${agent.agent_id}/versions/4`)).json().data;
    assert.deepEqual(v4.config, v1.config);
    assert.deepEqual((await get(org, `/api/agents/${agent.agent_id}/versions/4/diff?against=1`)).json().data.changes, []);
    // Versions are immutable: version 3 still holds what it held.
    assert.equal((await get(org, `/api/agents/${agent.agent_id}/versions/3`)).json().data.config.system_prompt, 'Be terse.');
    const audit = await database.pool.query(`SELECT changed_fields FROM audit_logs WHERE client_id = $1 AND action = 'agent.restore' AND resource_id = $2`, [org.orgId, agent.agent_id]);
    assert.equal(audit.rows.length, 1);
    assert.deepEqual(new Set(audit.rows[0].changed_fields), new Set(['agent_name', 'system_prompt', 'first_message', 'temperature']));
    const events = await database.pool.query(`SELECT data FROM events WHERE client_id = $1 AND type = 'agent.updated' ORDER BY created_at`, [org.orgId]);
    assert.equal(events.rows.length, eventsBefore + 1);
    assert.equal(events.rows.at(-1).data.version, 4);
    assert.equal((await app.inject({ method: 'POST', url: `/api/agents/${agent.agent_id}/versions/7/restore`, headers: asRole(org, 'admin') })).statusCode, 404);
  });

  test("another organization's agent and versions are 404; a version path that is no number is 404", async () => {
    const org = await createOrg();
    const other = await createOrg();
    const agent = await createAgent(other);
    for (const url of [`/api/agents/${agent.agent_id}/versions`, `/api/agents/${agent.agent_id}/versions/1`, `/api/agents/${agent.agent_id}/versions/1/diff?against=1`]) {
      assert.equal((await get(org, url)).statusCode, 404, url);
    }
    const mine = await createAgent(org);
    assert.equal((await get(org, `/api/agents/${mine.agent_id}/versions/one`)).statusCode, 404);
  });

  test('traffic: checked, routing only (no version), split by weight over 6,000 callers (within 4.5 standard deviations), sticky per caller', async () => {
    const { services } = await testEnv();
    const org = await createOrg();
    const agent = await createAgent(org, { system_prompt: 'A' });
    await patch(org, agent.agent_id, { system_prompt: 'B' });
    await patch(org, agent.agent_id, { system_prompt: 'C' });
    for (const [traffic, path] of [
      [[{ version: 1, weight: 50 }, { version: 2, weight: 40 }], 'body.traffic'],
      [[{ version: 1, weight: 50 }, { version: 4, weight: 50 }], 'body.traffic.1.version'],
      [[{ version: 1, weight: 50 }, { version: 1, weight: 50 }], 'body.traffic.1.version'],
    ] as const) {
      const res = await patch(org, agent.agent_id, { traffic });
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(res.json().errors[0].path, path);
    }
    const split = [{ version: 1, weight: 20 }, { version: 2, weight: 30 }, { version: 3, weight: 50 }];
    const set = await patch(org, agent.agent_id, { traffic: split });
    assert.equal(set.statusCode, 200, set.body);
    assert.deepEqual([set.json().data.version, set.json().data.traffic], [3, split], 'a split alone makes no version');
    assert.equal((await allVersions(org, agent.agent_id, 100)).length, 3);

    // 6,000 simulated callers through the one function every call path asks, counted here. Each
    // version's count is binomial (the agent id, and so the hash, is new every run): it must fall
    // within 4.5 standard deviations of its weight's share (by luck alone, one run in about 50,000
    // misses for one of the three), which is within 2.3-2.9 % of 6,000 for these weights.
    const callersTried = 6000;
    const counts = new Map<number, number>();
    for (let i = 0; i < callersTried; i++) {
      const caller = `+1415${String(1_000_000 + i * 7919).slice(-7)}`;
      const version = await services.agents.versionForCall(services.database.db, org.orgId, agent.agent_id, caller);
      counts.set(version, (counts.get(version) ?? 0) + 1);
    }
    for (const { version, weight } of split) {
      const p = weight / 100;
      const tolerance = 4.5 * Math.sqrt(callersTried * p * (1 - p));
      const count = counts.get(version) ?? 0;
      assert.ok(Math.abs(count - callersTried * p) <= tolerance, `version ${version}: ${count} of ${callersTried} callers for a weight of ${weight} (±${tolerance.toFixed(0)})`);
    }

    // Real calls: each caller keeps its version across calls, and the calls record it.
    const callers = Array.from({ length: 8 }, (_, i) => `+1650555${String(1000 + i)}`);
    const seen = new Map<string, Set<number>>();
    for (let round = 0; round < 3; round++) {
      for (const caller of callers) {
        const call = await finishedCall(org, agent.agent_id, {}, { from_number: caller });
        assert.ok([1, 2, 3].includes(call.agent_version), `agent_version ${call.agent_version}`);
        seen.set(caller, (seen.get(caller) ?? new Set()).add(call.agent_version));
      }
    }
    for (const [caller, versions] of seen) assert.equal(versions.size, 1, `${caller} ran versions ${[...versions]}`);
    // An outbound call is routed by the callee's number: the same number, the same version as its inbound calls.
    const outbound = await finishedCall(org, agent.agent_id, {}, { call_type: 'outbound', to_number: callers[0], from_number: '+14155550100' });
    assert.deepEqual(new Set([outbound.agent_version]), seen.get(callers[0]));

    // Without a split, the latest version takes every call.
    assert.equal((await patch(org, agent.agent_id, { traffic: null })).json().data.traffic, null);
    assert.equal((await finishedCall(org, agent.agent_id, {}, { from_number: callers[0] })).agent_version, 3);
    // A PATCH under a split makes a version the split does not send calls to (a draft until it is added).
    await patch(org, agent.agent_id, { traffic: [{ version: 1, weight: 100 }] });
    assert.equal((await patch(org, agent.agent_id, { system_prompt: 'D' })).json().data.version, 4);
    assert.equal((await finishedCall(org, agent.agent_id, {}, { from_number: callers[1] })).agent_version, 1);
    // Restoring is a rollback: the split is cleared and the restored version takes the calls.
    const { app } = await testEnv();
    const restored = await app.inject({ method: 'POST', url: `/api/agents/${agent.agent_id}/versions/2/restore`, headers: asRole(org, 'admin') });
    assert.deepEqual([restored.json().data.version, restored.json().data.traffic], [5, null]);
    assert.equal((await finishedCall(org, agent.agent_id, {}, { from_number: callers[1] })).agent_version, 5);
  });

  test('the sticky choice is a hash of (agent, caller, split): recomputed here independently', async () => {
    const org = await createOrg();
    const agent = await createAgent(org);
    await patch(org, agent.agent_id, { system_prompt: 'two' });
    const split = [{ version: 1, weight: 50 }, { version: 2, weight: 50 }];
    await patch(org, agent.agent_id, { traffic: split });
    for (let i = 0; i < 6; i++) {
      const caller = `+1212555${String(2000 + i)}`;
      const bucket = createHash('sha256').update(`${agent.agent_id}\n${caller}\n1:50,2:50`).digest().readUInt32BE(0) % 100;
      const call = await finishedCall(org, agent.agent_id, {}, { from_number: caller });
      assert.equal(call.agent_version, bucket < 50 ? 1 : 2, caller);
    }
  });

  test("the runtime reads the agent at the call's version, after a later PATCH and with its tools of then", async () => {
    const { app, services } = await testEnv();
    const org = await createOrg();
    const tool = await app.inject({
      method: 'POST', url: '/api/tools', headers: asRole(org, 'admin'),
      payload: { tool_name: 'lookup', tool_description: 'Finds', webhook_url: 'https://example.com/hook', http_method: 'POST' },
    });
    const agent = await createAgent(org, { system_prompt: 'Version one.', tool_ids: [tool.json().data.tool_id] });
    const call = await createCall(org, agent.agent_id);
    assert.equal(call.agent_version, 1);
    await patch(org, agent.agent_id, { system_prompt: 'Version two.', tool_ids: [], llm_model: 'gpt-other' });
    const { token } = await services.callTokens.issue({ callSid: call.call_sid, orgId: org.orgId, agentId: agent.agent_id }, 600);
    const config = await app.inject({ url: `/api/runtime/calls/${call.call_sid}`, headers: { authorization: `Bearer ${token}`, 'x-organization-id': org.orgId } });
    assert.equal(config.statusCode, 200, config.body);
    const data = config.json().data;
    assert.deepEqual([data.agent.version, data.agent.system_prompt, data.agent.llm_model, data.agent.tool_ids], [1, 'Version one.', 'gpt-4o-mini', [tool.json().data.tool_id]]);
    assert.deepEqual(data.tools.map((t: any) => t.name), ['lookup']);
    const later = await createCall(org, agent.agent_id);
    assert.equal(later.agent_version, 2);
    const { token: laterToken } = await services.callTokens.issue({ callSid: later.call_sid, orgId: org.orgId, agentId: agent.agent_id }, 600);
    const laterConfig = (await app.inject({ url: `/api/runtime/calls/${later.call_sid}`, headers: { authorization: `Bearer ${laterToken}`, 'x-organization-id': org.orgId } })).json().data;
    assert.deepEqual([laterConfig.agent.version, laterConfig.agent.system_prompt, laterConfig.tools], [2, 'Version two.', []]);
  });

  test("a campaign's call is routed by the callee's number like any other", async () => {
    const { services, database } = await testEnv();
    const org = await createOrg();
    const agent = await createAgent(org);
    await patch(org, agent.agent_id, { system_prompt: 'two' });
    await patch(org, agent.agent_id, { traffic: [{ version: 1, weight: 50 }, { version: 2, weight: 50 }] });
    for (let i = 0; i < 6; i++) {
      const callee = `+1303555${String(3000 + i)}`;
      const bucket = createHash('sha256').update(`${agent.agent_id}\n${callee}\n1:50,2:50`).digest().readUInt32BE(0) % 100;
      const callSid = newCallSid();
      await transaction(database.db, (tx) => services.calls.createCampaignCall(tx, org.orgId, { callSid, agentId: agent.agent_id, toNumber: callee, fromNumber: '+14155550100', campaignId: 'camp_versions' }));
      const { rows } = await database.pool.query('SELECT agent_version FROM calls WHERE client_id = $1 AND call_sid = $2', [org.orgId, callSid]);
      assert.equal(rows[0].agent_version, bucket < 50 ? 1 : 2, callee);
    }
  });

  test('GET /api/calls?agent_version and usage group_by=agent_version count what the calls recorded', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const agent = await createAgent(org);
    const made: Array<{ call_sid: string; agent_version: number; total_cost: number }> = [];
    made.push(await finishedCall(org, agent.agent_id, { total_cost: 0 }));
    made.push(await finishedCall(org, agent.agent_id, { total_cost: 0 }));
    await patch(org, agent.agent_id, { temperature: 0.1 });
    for (let i = 0; i < 3; i++) made.push(await finishedCall(org, agent.agent_id, { total_cost: 0 }));
    const expected = new Map<number, string[]>();
    for (const call of made) expected.set(call.agent_version, [...(expected.get(call.agent_version) ?? []), call.call_sid]);
    assert.deepEqual([...expected.keys()].sort(), [1, 2]);
    for (const [version, sids] of expected) {
      const list = await get(org, `/api/calls?agent_version=${version}`);
      assert.equal(list.statusCode, 200, list.body);
      assert.deepEqual(list.json().data.map((c: any) => c.call_sid).sort(), [...sids].sort());
    }
    const start = new Date(Date.now() - 3_600_000).toISOString();
    const end = new Date(Date.now() + 3_600_000).toISOString();
    const usage = await app.inject({ url: `/api/analytics/usage?${new URLSearchParams({ granularity: 'hour', start, end, group_by: 'agent_version', metrics: 'calls' })}`, headers: asRole(org, 'user') });
    assert.equal(usage.statusCode, 200, usage.body);
    const perGroup = Object.fromEntries(usage.json().data.series.map((s: any) => [s.group.agent_version, s.points.reduce((n: number, p: any) => n + p.calls, 0)]));
    assert.deepEqual(perGroup, Object.fromEntries([...expected].map(([v, sids]) => [String(v), sids.length])));
  });
});
