import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.ts';
import { buildServices, type Services } from '../src/services.ts';
import { CAMPAIGN_JOBS, CAMPAIGN_PLACE_CALL } from '../src/modules/campaigns/jobs.ts';
import { startCarrierStandIn, type CarrierStandIn } from './helpers/carrier-standin.ts';
import { testConfig, testEnv } from './helpers/env.ts';
import { asRole, createOrg, type TestOrg } from './helpers/fixtures.ts';
import { grantCredits } from './helpers/calls.ts';
import { campaignAction, csvForm, getCampaign } from './helpers/campaigns.ts';
import { freePort } from './helpers/net.ts';
import { carrierNumber } from './helpers/telephony.ts';

/**
 * Issue 30: a campaign contact whose call failed for a runtime reason shows the call's `error`
 * (extensions.md §10 `error: {provider, code, message}`). RUNTIME=off and no RUNTIME_STREAM_URL: the
 * answered call has no runtime to connect to. Set up as test/campaign-dialer.test.ts.
 */
describe('campaign contacts show why their call failed', () => {
  let carrier: CarrierStandIn;
  let app: FastifyInstance;
  let services: Services;
  const clock = { at: Date.parse('2026-03-30T10:00:00Z') };

  before(async () => {
    const env = await testEnv();
    carrier = await startCarrierStandIn();
    const port = await freePort();
    const config = testConfig(env.tmpDir, {
      CARRIER_A_API_URL: carrier.url, PUBLIC_BASE_URL: `http://127.0.0.1:${port}`, RUNTIME: 'off',
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

  test('RUNTIME=off, no runtime URL: the contact failed and its listing shows {provider: runtime, code: no_runtime}', async () => {
    carrier.placement = () => 'accept';
    carrier.autoPlay = () => ({ result: 'answered', durationSeconds: 5, brief: true });
    const { org, campaignId } = await setup({ schedule: ALWAYS, retry: { max_attempts: 1, on: ['failed'], delay_minutes: 1 } });
    await upload(org, campaignId, 'phone_number\n+15550001001\n');
    await start(org, campaignId);
    for (let step = 0; step < 50; step++) {
      const { next } = await tick(org, campaignId);
      if (next === null) break;
      await new Promise((r) => setTimeout(r, 20));
      clock.at += 1000;
    }
    await settle(org, campaignId, (c) => c.progress.failed === 1, 'the contact never failed');
    const res = await app.inject({ url: `/api/campaigns/${campaignId}/contacts`, headers: asRole(org, 'user') });
    assert.equal(res.statusCode, 200, res.body);
    const [contact] = res.json().data;
    assert.equal(contact.status, 'failed');
    assert.equal(contact.last_outcome, 'failed');
    assert.equal(contact.error?.provider, 'runtime');
    assert.equal(contact.error?.code, 'no_runtime');
    assert.match(contact.error?.message, /RUNTIME_STREAM_URL/);
  });
});
