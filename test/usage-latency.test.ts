import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { testEnv } from './helpers/env.ts';
import { asRole, createAgent, createOrg } from './helpers/fixtures.ts';
import { createCall, patchCall } from './helpers/calls.ts';

/**
 * extensions.md §10 adds the usage metrics latency_p50 and latency_p95 (§5: "Percentiles are within
 * 5% of the exact value"): their population is the agent turns' latency.total_ms of the ended calls.
 */
const START = '2026-03-04T10:00:00.000Z';

/** The nearest-rank percentile, computed here over every value. */
function exact(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(1, Math.ceil(p * sorted.length)) - 1]!;
}

/** A reproducible spread of latencies from 40 ms to a few seconds. */
function latencies(seed: number, count: number): number[] {
  let x = seed;
  return Array.from({ length: count }, () => {
    x = (x * 1_103_515_245 + 12_345) % 2 ** 31;
    return 40 + Math.round((x / 2 ** 31) ** 2 * 4_000);
  });
}

describe('usage analytics: latency_p50 and latency_p95', () => {
  test('per agent, per metadata group and in total, within 5% of the exact percentiles of the agent turns', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const agents = [(await createAgent(org)).agent_id, (await createAgent(org)).agent_id];
    const byAgent = new Map<string, number[]>(agents.map((a) => [a, []]));
    const byTeam = new Map<string, number[]>([['red', []], ['blue', []]]);
    for (let i = 0; i < 24; i++) {
      const agentId = agents[i % 2]!;
      const team = i % 3 === 0 ? 'red' : 'blue';
      const turns = latencies(i + 1, 1 + (i % 4));
      byAgent.get(agentId)!.push(...turns);
      byTeam.get(team)!.push(...turns);
      const transcript = turns.flatMap((total_ms, t) => [
        { role: 'user', text: `question ${t}`, start_seconds: t * 10 },
        { role: 'agent', text: `answer ${t}`, start_seconds: t * 10 + 3, latency: { stt_ms: 100, llm_first_token_ms: 200, tts_first_byte_ms: 50, total_ms } },
      ]);
      const call = await createCall(org, agentId, { status: 'in_progress', start_time: START, metadata: { team } });
      // A call without turns counts no latency (but counts as a call).
      const res = await patchCall(org, call.call_sid, { status: 'completed', end_reason: 'user_hangup', duration_seconds: 60, transcript: i === 5 ? [] : transcript });
      assert.equal(res.statusCode, 200, res.body);
      if (i === 5) byAgent.get(agentId)!.splice(-turns.length), byTeam.get(team)!.splice(-turns.length);
    }
    const usage = async (groupBy: string) => {
      const res = await app.inject({
        url: `/api/analytics/usage?start=2026-03-04T00:00:00Z&end=2026-03-05T00:00:00Z&granularity=hour&metrics=calls,latency_p50,latency_p95${groupBy}`,
        headers: asRole(org, 'user'),
      });
      assert.equal(res.statusCode, 200, res.body);
      return res.json().data;
    };
    const near = (got: number, values: number[], p: number, what: string) => {
      const want = exact(values, p);
      assert.ok(Math.abs(got - want) <= 0.05 * want, `${what}: ${got} vs exact ${want}`);
    };
    const all = [...byAgent.values()].flat();
    for (const [groupBy, field, groups] of [['&group_by=agent', 'agent_id', byAgent], ['&group_by=metadata.team', 'metadata.team', byTeam], ['', '', undefined]] as const) {
      const report = await usage(groupBy);
      for (const p of [0.5, 0.95]) near(report.totals[`latency_p${p * 100}`], all, p, `totals ${groupBy}`);
      for (const series of report.series) {
        const values = groups ? groups.get(series.group[field])! : all;
        const point = series.points.find((pt: { start: string }) => pt.start === START)!;
        const quiet = series.points.filter((pt: { start: string }) => pt.start !== START);
        for (const p of [0.5, 0.95]) near(point[`latency_p${p * 100}`], values, p, `${groupBy} ${JSON.stringify(series.group)} p${p * 100}`);
        assert.ok(quiet.every((pt: { latency_p50: number; latency_p95: number }) => pt.latency_p50 === 0 && pt.latency_p95 === 0), 'buckets without calls are zero');
      }
      if (groups) assert.equal(report.series.length, groups.size);
    }
  });
});
