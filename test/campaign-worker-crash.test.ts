import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { describe, test } from 'node:test';
import { buildApp } from '../src/app.ts';
import { buildServices } from '../src/services.ts';
import { CAMPAIGN_JOBS } from '../src/modules/campaigns/jobs.ts';
import { startCarrierStandIn } from './helpers/carrier-standin.ts';
import { TEST_ENCRYPTION_KEY, testConfig, testEnv } from './helpers/env.ts';
import { asRole, createOrg } from './helpers/fixtures.ts';
import { grantCredits } from './helpers/calls.ts';
import { assertProgressTrue, campaignAction, getCampaign } from './helpers/campaigns.ts';
import { freePort } from './helpers/net.ts';
import { carrierNumber } from './helpers/telephony.ts';
import { exited, spawnWorker, workerDatabaseUrl } from './helpers/workers.ts';

/**
 * extensions.md §3: "A worker killed mid-campaign loses and doubles nothing." Two `switchboard
 * worker` processes in turn run the campaign's jobs (ticks and placements) against the carrier
 * stand-in; the first is SIGKILLed while calls are being placed.
 */
describe('campaigns: a `switchboard worker` killed with SIGKILL mid-campaign', () => {
  test('every contact is called and ends completed; no attempt is dialled twice; progress adds up', async () => {
    const env = await testEnv();
    const { database, queue, tmpDir } = env;
    const carrier = await startCarrierStandIn();
    // Every call is answered and lasts a moment, so calls are in flight when the worker dies.
    carrier.autoPlay = () => ({ result: 'answered', durationSeconds: 20, holdMs: 300, brief: true });
    const port = await freePort();
    const publicUrl = `http://127.0.0.1:${port}`;
    // The server that receives the carrier's webhooks; it runs no campaign job itself.
    const services = await buildServices(
      testConfig(tmpDir, { CARRIER_A_API_URL: carrier.url, PUBLIC_BASE_URL: publicUrl, RUNTIME_STREAM_URL: 'wss://runtime.example.test/stream' }),
      database, { queue, log: env.services.log },
    );
    const app = await buildApp(services, { closeServices: true });
    await app.listen({ port, host: '127.0.0.1' });
    for (const job of CAMPAIGN_JOBS) await queue.boss.offWork(job.name);
    const workerEnv = {
      DATABASE_URL: workerDatabaseUrl(database), DATA_DIR: path.join(tmpDir, 'campaign-worker'), LOG_LEVEL: 'silent',
      ENCRYPTION_KEY: TEST_ENCRYPTION_KEY.toString('base64'), CARRIER_A_API_URL: carrier.url, PUBLIC_BASE_URL: publicUrl,
      JOB_SUPERVISE_SECONDS: '1', JOB_EXPIRE_SECONDS: '4', JOB_RETRY_LIMIT: '2',
    };
    const children: ChildProcess[] = [];
    try {
      const org = await createOrg();
      await grantCredits(org.orgId, 1000);
      const { phoneNumberId, agentId } = await carrierNumber(app, carrier, org, { outbound: true });
      const created = await app.inject({
        method: 'POST', url: '/api/campaigns', headers: asRole(org, 'agent_manager'),
        payload: {
          name: 'Crash test', agent_id: agentId, from_phone_number_id: phoneNumberId, max_concurrency: 5, calls_per_minute: 600,
          schedule: { timezone: 'UTC', windows: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], start: '00:00', end: '24:00' }] },
          retry: { max_attempts: 3, on: ['failed'], delay_minutes: 0 },
        },
      });
      assert.equal(created.statusCode, 200, created.body);
      const campaignId = created.json().data.campaign_id as string;
      const numbers = Array.from({ length: 40 }, (_, i) => `+1555030${String(i).padStart(4, '0')}`);
      const added = await app.inject({
        method: 'POST', url: `/api/campaigns/${campaignId}/contacts`, headers: asRole(org, 'agent_manager'),
        payload: { contacts: numbers.map((phone_number) => ({ phone_number })) },
      });
      assert.equal(added.json().data.accepted, 40);
      assert.equal((await campaignAction(org, campaignId, 'start')).statusCode, 200);

      children.push(spawnWorker(workerEnv));
      const waitFor = async (what: string, ok: () => boolean | Promise<boolean>, ms: number) => {
        const deadline = Date.now() + ms;
        while (!(await ok())) {
          assert.ok(Date.now() < deadline, what);
          await new Promise((r) => setTimeout(r, 50));
        }
      };
      await waitFor('the first worker placed no call', () => carrier.placed.length >= 8, 180_000); // a worker starts slowly on a busy machine
      children[0]!.kill('SIGKILL');
      await exited(children[0]!);
      const beforeRestart = carrier.placed.length;
      assert.ok(beforeRestart < numbers.length, `the first worker was stopped mid-way (${beforeRestart} of ${numbers.length})`);

      children.push(spawnWorker(workerEnv));
      await waitFor('the campaign did not complete', async () => (await getCampaign(org, campaignId)).status === 'completed', 240_000);

      const progress = await assertProgressTrue(org, campaignId);
      assert.deepEqual(progress, { total: 40, pending: 0, in_progress: 0, completed: 40, failed: 0, retrying: 0, skipped: 0 });
      // No attempt was dialled twice: one placement per call sid, and the carrier's placements of each
      // number are that contact's attempts (an attempt lost with the worker is failed and retried, never re-dialled).
      const placed = carrier.placed.filter((c) => numbers.includes(c.to));
      const sids = placed.map((c) => new URL(c.url).searchParams.get('call_sid'));
      assert.equal(new Set(sids).size, sids.length);
      const contacts = (await app.inject({ url: `/api/campaigns/${campaignId}/contacts?page_size=100`, headers: asRole(org, 'user') })).json().data;
      assert.equal(contacts.length, 40);
      for (const contact of contacts) {
        const dialled = placed.filter((c) => c.to === contact.phone_number).map((c) => new URL(c.url).searchParams.get('call_sid'));
        assert.ok(dialled.every((sid) => contact.call_sids.includes(sid)), contact.phone_number);
        assert.ok(dialled.length <= contact.attempts && contact.attempts <= dialled.length + 1, `${contact.phone_number}: ${dialled.length} placements, ${contact.attempts} attempts`);
      }
    } finally {
      for (const child of children) child.kill('SIGTERM');
      await Promise.all(children.map(exited));
      await app.close();
      await carrier.close();
      await queue.work(env.services.jobs.filter((unit) => CAMPAIGN_JOBS.some((job) => job.name === unit.name)));
    }
  });
});
