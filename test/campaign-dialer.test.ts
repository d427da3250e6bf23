import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { parse } from 'csv-parse/sync';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.ts';
import { buildServices, type Services } from '../src/services.ts';
import { CAMPAIGN_JOBS, CAMPAIGN_PLACE_CALL } from '../src/modules/campaigns/jobs.ts';
import { startCarrierStandIn, type CarrierStandIn, type Outcome, type PlacedCall } from './helpers/carrier-standin.ts';
import { testConfig, testEnv } from './helpers/env.ts';
import { asRole, createOrg, type TestOrg } from './helpers/fixtures.ts';
import { grantCredits } from './helpers/calls.ts';
import { assertProgressTrue, campaignAction, csvForm, getCampaign } from './helpers/campaigns.ts';
import { setConcurrencyLimit } from './helpers/limits.ts';
import { freePort } from './helpers/net.ts';
import { carrierNumber } from './helpers/telephony.ts';

/**
 * extensions.md §3: the dialer against the carrier stand-in, which plays each placed call back
 * through the signed webhooks over HTTP. The test drives the dialer's ticks itself on a clock it
 * moves (nothing sleeps to reach a window or a retry) and plays the placement worker by fetching
 * the queued placement jobs; test/campaign-worker-crash.test.ts runs real worker processes.
 */
describe('campaign dialer against the carrier stand-in', () => {
  let carrier: CarrierStandIn;
  let app: FastifyInstance;
  let services: Services;
  const clock = { at: Date.parse('2026-03-30T10:00:00Z') };

  before(async () => {
    const env = await testEnv();
    carrier = await startCarrierStandIn();
    const port = await freePort();
    const config = testConfig(env.tmpDir, {
      CARRIER_A_API_URL: carrier.url, PUBLIC_BASE_URL: `http://127.0.0.1:${port}`, RUNTIME_STREAM_URL: 'wss://runtime.example.test/stream',
    });
    services = await buildServices(config, env.database, { queue: env.queue, log: env.services.log, now: () => new Date(clock.at) });
    app = await buildApp(services, { closeServices: true });
    await app.listen({ port, host: '127.0.0.1' });
    // Only this test dials: the shared workers leave the campaign jobs alone while it runs.
    for (const job of CAMPAIGN_JOBS) await env.queue.boss.offWork(job.name);
  });
  after(async () => {
    const env = await testEnv();
    await app?.close();
    await carrier?.close();
    await env.queue.work(env.services.jobs.filter((unit) => CAMPAIGN_JOBS.some((job) => job.name === unit.name)));
  });

  /** The placement worker's part: every queued placement job of the campaigns, placed at once. */
  const placeQueued = async () => {
    const { queue } = await testEnv();
    for (;;) {
      const jobs = await queue.boss.fetch<{ clientId: string; campaignId: string; contactId: number; callSid: string }>(CAMPAIGN_PLACE_CALL.name, { batchSize: 100 });
      if (!jobs.length) return;
      await Promise.all(jobs.map((job) => services.dialer.place(job.data)));
      await queue.boss.complete(CAMPAIGN_PLACE_CALL.name, jobs.map((job) => job.id));
    }
  };
  const settle = async (org: TestOrg, campaignId: string, until: (c: any) => boolean, what: string) => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const campaign = await getCampaign(org, campaignId);
      if (until(campaign)) return campaign;
      assert.ok(Date.now() < deadline, `${what}: ${JSON.stringify(campaign.progress)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const setup = async (body: Record<string, unknown>) => {
    const org = await createOrg();
    await grantCredits(org.orgId, 1000);
    const { phoneNumberId, agentId } = await carrierNumber(app, carrier, org, { outbound: true });
    const res = await app.inject({
      method: 'POST', url: '/api/campaigns', headers: asRole(org, 'agent_manager'),
      payload: { name: 'Dialer test', agent_id: agentId, from_phone_number_id: phoneNumberId, ...body },
    });
    assert.equal(res.statusCode, 200, res.body);
    return { org, campaignId: res.json().data.campaign_id as string };
  };
  const upload = async (org: TestOrg, campaignId: string, csv: string) => {
    const form = csvForm(csv);
    const res = await app.inject({ method: 'POST', url: `/api/campaigns/${campaignId}/contacts`, headers: asRole(org, 'agent_manager', { 'content-type': form.contentType }), payload: form.body });
    assert.equal(res.statusCode, 200, res.body);
    return res.json().data;
  };
  const start = async (org: TestOrg, campaignId: string) => assert.equal((await campaignAction(org, campaignId, 'start')).statusCode, 200);
  const tick = async (org: TestOrg, campaignId: string) => {
    const result = await services.dialer.tick(org.orgId, campaignId);
    await placeQueued();
    return result;
  };
  const ALWAYS = { timezone: 'UTC', windows: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], start: '00:00', end: '24:00' }] };

  test('1,000 contacts from a CSV with bad rows: pace and concurrency held, busy retried, every contact ends as its calls did, results CSV true', async () => {
    const numbers = Array.from({ length: 1000 }, (_, i) => `+1555${String(1_000_000 + i).padStart(7, '0')}`);
    // The outcome each number gets, decided here from its index (an independent rule the results must match).
    const index = new Map(numbers.map((n, i) => [n, i]));
    const expected = (i: number) => i % 10 === 3 ? { status: 'completed', attempts: 2, last: 'completed' }
      : i % 10 === 7 ? { status: 'failed', attempts: 3, last: 'no_answer' }
        : i % 50 === 11 ? { status: 'failed', attempts: 3, last: 'failed' }
          : { status: 'completed', attempts: 1, last: 'completed' };
    const attempts = new Map<string, number>();
    carrier.placement = (to) => (index.get(to)! % 50 === 11 ? 'reject' : 'accept');
    carrier.autoPlay = (call: PlacedCall): Outcome => {
      const i = index.get(call.to)!;
      const n = (attempts.get(call.to) ?? 0) + 1;
      attempts.set(call.to, n);
      if (i % 10 === 3 && n === 1) return { result: 'busy', brief: true };
      if (i % 10 === 7) return { result: 'no-answer', brief: true };
      return { result: 'answered', durationSeconds: 30 + (i % 7), brief: true };
    };
    carrier.active.max = carrier.active.now;
    const placedBefore = carrier.placed.length;
    try {
      const { org, campaignId } = await setup({ schedule: ALWAYS, max_concurrency: 10, calls_per_minute: 120, retry: { max_attempts: 3, on: ['busy', 'no_answer', 'failed'], delay_minutes: 1 } });
      await setConcurrencyLimit(org.orgId, 100);
      const bad = ['12345', numbers[5], '+15550000001,Extra,column'];
      const csv = ['phone_number,first_name', ...numbers.map((n, i) => `${n},Name ${i}`), `${bad[0]},Bad`, `${bad[1]},Again`, bad[2]].join('\n');
      const uploaded = await upload(org, campaignId, csv);
      assert.equal(uploaded.accepted, 1000, JSON.stringify(uploaded.rejected));
      assert.deepEqual(uploaded.rejected.map((r: any) => [r.row, r.reason]), [[1001, 'invalid_phone_number'], [1002, 'duplicate'], [1003, 'extra_column']]);
      await start(org, campaignId);

      const dials: number[] = [];
      for (let step = 0; step < 5000; step++) {
        const { dialed, next } = await tick(org, campaignId);
        for (let k = 0; k < dialed; k++) dials.push(clock.at);
        if (next === null) break;
        const campaign = await getCampaign(org, campaignId);
        assert.ok(campaign.progress.in_progress <= 10, `max_concurrency exceeded: ${campaign.progress.in_progress}`);
        // Let calls end (they do at the carrier's pace, in real time) when the bound is reached, then move the clock a second.
        if (dialed === 0 && campaign.progress.in_progress > 0) await new Promise((r) => setTimeout(r, 10));
        clock.at += 1000;
      }
      const campaign = await settle(org, campaignId, (c) => c.status === 'completed', 'the campaign never completed');
      const progress = await assertProgressTrue(org, campaignId);
      const failures = numbers.filter((_, i) => expected(i).status === 'failed').length;
      assert.deepEqual(progress, { total: 1000, pending: 0, in_progress: 0, completed: 1000 - failures, failed: failures, retrying: 0, skipped: 0 });
      assert.equal(campaign.status, 'completed');

      // Bounds as the carrier saw them, and the pace over every 60 s of the dialer's clock.
      assert.ok(carrier.active.max <= 10, `the carrier saw ${carrier.active.max} calls at once`);
      for (let a = 0, b = 0; b < dials.length; b++) {
        while (dials[a]! <= dials[b]! - 60_000) a++;
        assert.ok(b - a + 1 <= 120, `${b - a + 1} calls started within 60 s`);
      }
      // Each attempt was placed once: one placement per call sid; placements per number = its attempts.
      const placed = carrier.placed.slice(placedBefore);
      const sids = placed.map((c) => new URL(c.url).searchParams.get('call_sid'));
      assert.equal(new Set(sids).size, sids.length);
      const rejectedPlacements = numbers.filter((_, i) => i % 50 === 11).length * 3;
      const expectedAttempts = numbers.reduce((sum, _, i) => sum + expected(i).attempts, 0);
      assert.equal(placed.length + rejectedPlacements, expectedAttempts);

      const results = await app.inject({ url: `/api/campaigns/${campaignId}/results`, headers: asRole(org, 'user') });
      assert.equal(results.statusCode, 200);
      assert.match(String(results.headers['content-type']), /^text\/csv/);
      const rows = parse(results.body, { columns: true }) as Array<Record<string, string>>;
      assert.equal(rows.length, 1000);
      for (const row of rows) {
        const i = index.get(row.phone_number!)!;
        const want = expected(i);
        assert.deepEqual([row.first_name, row.status, Number(row.attempts), row.last_outcome], [`Name ${i}`, want.status, want.attempts, want.last], row.phone_number);
        assert.match(row.last_call_sid!, /^call_/);
      }
      const events = (await app.inject({ url: '/api/events?type=campaign.completed', headers: asRole(org, 'admin') })).json().data;
      assert.deepEqual(events.map((e: any) => [e.data.campaign_id, e.data.status]), [[campaignId, 'completed']]);
    } finally {
      carrier.placement = () => 'accept';
      carrier.autoPlay = () => undefined;
    }
  });

  test('windows in the campaign\'s time zone, across the daylight-saving change: nothing is dialled until a window opens', async () => {
    carrier.autoPlay = () => ({ result: 'answered', durationSeconds: 10 });
    try {
      // Europe/Berlin, weekdays 09:00-17:00. Summer time began on Sunday 2026-03-29.
      const { org, campaignId } = await setup({ schedule: { timezone: 'Europe/Berlin', windows: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri'], start: '09:00', end: '17:00' }] }, max_concurrency: 1 });
      await upload(org, campaignId, ['phone_number', '+15550100001', '+15550100002', '+15550100003', '+15550100004'].join('\n'));
      await start(org, campaignId);
      const at = async (iso: string, dials: boolean) => {
        clock.at = Date.parse(iso);
        await settle(org, campaignId, (c) => c.progress.in_progress === 0, 'the last call did not end');
        const result = await tick(org, campaignId);
        assert.equal(result.dialed > 0, dials, `${iso}: ${JSON.stringify(result)}`);
        if (!dials) assert.equal(result.reason, 'outside the schedule');
      };
      await at('2026-03-27T07:59:59Z', false); // Friday 08:59:59 CET
      await at('2026-03-27T08:00:00Z', true); //  Friday 09:00 CET
      await at('2026-03-28T10:00:00Z', false); // Saturday
      await at('2026-03-30T06:59:59Z', false); // Monday 08:59:59 CEST
      await at('2026-03-30T07:00:00Z', true); //  Monday 09:00 CEST
      await at('2026-03-30T14:59:59Z', true); //  Monday 16:59:59 CEST
      await at('2026-03-30T15:00:00Z', false); // Monday 17:00 CEST: closed
      const waiting = await services.dialer.tick(org.orgId, campaignId);
      // Closed until Tuesday 09:00 CEST: the next tick waits the longest wait, not a busy loop.
      assert.equal(waiting.next, 60);
      await at('2026-03-31T07:00:00Z', true);
      // The last call's end completes the campaign, in that call's transaction.
      await settle(org, campaignId, (c) => c.status === 'completed', 'the campaign did not complete');
      await assertProgressTrue(org, campaignId);
    } finally {
      carrier.autoPlay = () => undefined;
    }
  });

  test('pause, resume and cancel; an organization over its concurrency limit and without credits waits', async () => {
    const { org, campaignId } = await setup({ schedule: ALWAYS, max_concurrency: 5, calls_per_minute: 600 });
    await upload(org, campaignId, ['phone_number', ...Array.from({ length: 12 }, (_, i) => `+1555020${String(i).padStart(4, '0')}`)].join('\n'));
    await setConcurrencyLimit(org.orgId, 3);
    await start(org, campaignId);
    const placedBefore = carrier.placed.length;
    const first = await tick(org, campaignId);
    assert.equal(first.dialed, 3); // the organization's limit binds before max_concurrency
    assert.equal((await tick(org, campaignId)).reason, 'organization concurrency limit');

    assert.equal((await campaignAction(org, campaignId, 'pause')).statusCode, 200);
    assert.deepEqual(await services.dialer.tick(org.orgId, campaignId), { dialed: 0, next: null, reason: 'not running' });
    // Calls of a paused campaign finish; a busy one is retried after the pause.
    const held = carrier.placed.slice(placedBefore);
    await carrier.play(held[0]!.sid, { result: 'answered', durationSeconds: 5 });
    await carrier.play(held[1]!.sid, { result: 'busy' });
    let progress = await assertProgressTrue(org, campaignId);
    assert.deepEqual([progress.completed, progress.retrying, progress.in_progress], [1, 1, 1]);

    assert.equal((await campaignAction(org, campaignId, 'resume')).statusCode, 200);
    const { database } = await testEnv();
    await database.pool.query("UPDATE credit_accounts SET balance = 0 WHERE client_id = $1", [org.orgId]);
    assert.equal((await tick(org, campaignId)).reason, 'no credits');
    await grantCredits(org.orgId, 10);
    assert.equal((await tick(org, campaignId)).dialed, 2);

    assert.equal((await campaignAction(org, campaignId, 'cancel')).statusCode, 200);
    progress = await assertProgressTrue(org, campaignId);
    assert.deepEqual([progress.skipped, progress.in_progress], [8, 3]);
    // Calls in progress finish without retries; nothing more is dialled.
    for (const call of carrier.placed.slice(placedBefore).filter((c) => !c.ended)) await carrier.play(call.sid, { result: 'busy' });
    progress = await assertProgressTrue(org, campaignId);
    assert.deepEqual(progress, { total: 12, pending: 0, in_progress: 0, completed: 1, failed: 3, retrying: 0, skipped: 8 });
    assert.equal((await getCampaign(org, campaignId)).status, 'cancelled');
    assert.equal((await tick(org, campaignId)).reason, 'not running');
    assert.equal(carrier.placed.length - placedBefore, 5);
  });
});
