import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { createCampaign, csvForm } from './helpers/campaigns.ts';
import { buildTestApp, testConfig, testEnv } from './helpers/env.ts';
import { asRole, createOrg, type TestOrg } from './helpers/fixtures.ts';

/** `rows` contacts with distinct numbers and one variable. */
function contactsCsv(rows: number, prefix: string): string {
  const lines = ['phone_number,name'];
  for (let i = 0; i < rows; i++) lines.push(`+1${prefix}${String(i).padStart(6, '0')},Contact ${i}`);
  return lines.join('\n');
}

async function count(sql: string, params: unknown[]): Promise<number> {
  const { database } = await testEnv();
  return Number((await database.pool.query(sql, params)).rows[0].n);
}

/** Contacts the campaign has, and rows still staged for it (0 where the staging table does not exist). */
async function state(orgId: string, campaignId: string) {
  const contacts = await count('SELECT count(*) AS n FROM campaign_contacts WHERE client_id = $1 AND campaign_id = $2', [orgId, campaignId]);
  const staged = await count('SELECT count(*) AS n FROM campaign_contact_staging WHERE client_id = $1 AND campaign_id = $2', [orgId, campaignId]).catch(() => 0);
  const total = await count('SELECT total AS n FROM campaigns WHERE id = $1', [campaignId]);
  return { contacts, staged, total };
}

async function until<T>(what: string, probe: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('a campaign CSV upload is all or nothing', () => {
  let app: FastifyInstance;
  let base: string;
  before(async () => {
    const env = await testEnv();
    app = await buildTestApp(testConfig(env.tmpDir));
    await app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  });
  after(() => app.close());

  /** Sends the head of the form's body over real HTTP (the declared length is the whole), then cuts the connection. */
  async function cutUpload(org: TestOrg, campaignId: string, body: Buffer, contentType: string, sent: number, received: () => Promise<boolean>) {
    const url = new URL(`${base}/api/campaigns/${campaignId}/contacts`);
    const request = http.request(url, {
      method: 'POST', headers: { ...asRole(org, 'agent_manager'), 'content-type': contentType, 'content-length': String(body.length) },
    });
    request.on('error', () => {}); // the cut itself
    let answered = false;
    request.on('response', () => (answered = true));
    request.write(body.subarray(0, sent));
    await until('the server to take in the first part of the upload', received, Boolean);
    request.destroy();
    assert.equal(answered, false, 'the upload was never answered');
  }

  test('an upload cut mid-body leaves no contacts and no staged rows', async () => {
    const org = await createOrg();
    const campaign = await createCampaign(org);
    const form = csvForm(contactsCsv(5000, '212'));
    await cutUpload(org, campaign.campaign_id, form.body, form.contentType, Math.floor(form.body.length * 0.8), async () => {
      const s = await state(org.orgId, campaign.campaign_id);
      return s.staged + s.contacts >= 3000; // at least three batches of 1,000 were handled
    });
    // The server notices the cut and gives the upload up; until then its batches may still be staged.
    const after = await until('the staged rows to be deleted', () => state(org.orgId, campaign.campaign_id), (s) => s.staged === 0);
    assert.deepEqual(after, { contacts: 0, staged: 0, total: 0 });
  });

  test('a complete upload over real HTTP imports every contact, and leaves nothing staged', async () => {
    const org = await createOrg();
    const campaign = await createCampaign(org);
    const form = csvForm(contactsCsv(5000, '213'));
    const res = await fetch(`${base}/api/campaigns/${campaign.campaign_id}/contacts`, {
      method: 'POST', body: form.body, headers: { ...asRole(org, 'agent_manager'), 'content-type': form.contentType },
    });
    assert.equal(res.status, 200, await res.clone().text());
    const { data } = await res.json() as { data: { accepted: number; rejected_count: number } };
    assert.equal(data.accepted, 5000);
    assert.equal(data.rejected_count, 0);
    assert.deepEqual(await state(org.orgId, campaign.campaign_id), { contacts: 5000, staged: 0, total: 5000 });
  });

  test('the hourly cleanup deletes the staged rows of uploads a dead process left behind, not those of live ones', async () => {
    const { database, services } = await testEnv();
    const org = await createOrg();
    const campaign = await createCampaign(org);
    const stage = (uploadId: string, stagedAt: Date) => database.pool.query(
      `INSERT INTO campaign_contact_staging (upload_id, client_id, campaign_id, batch, "row", phone_number, variables, staged_at)
       SELECT $1, $2, $3, 0, g, '+1214' || lpad(g::text, 7, '0'), '{}', $4 FROM generate_series(1, 10) g`,
      [uploadId, org.orgId, campaign.campaign_id, stagedAt]);
    await stage('upload-of-a-dead-process', new Date(Date.now() - 2 * 60 * 60 * 1000));
    await stage('upload-arriving-now', new Date());
    assert.ok(await services.campaigns.deleteAbandonedUploads() >= 10);
    const left = await database.pool.query('SELECT DISTINCT upload_id FROM campaign_contact_staging WHERE campaign_id = $1', [campaign.campaign_id]);
    assert.deepEqual(left.rows.map((r) => r.upload_id), ['upload-arriving-now']);
    await database.pool.query('DELETE FROM campaign_contact_staging WHERE campaign_id = $1', [campaign.campaign_id]);
  });
});
