/**
 * Campaigns benchmark on PostgreSQL (issue 17):
 *  - upload: a 100,000-contact CSV streamed to the real server in a child process: time, rows per
 *    second, and the server's RSS growth sampled every 50 ms from /proc (target: under 64 MB);
 *  - dialer: a 10,000-contact campaign with max_concurrency 50 against the carrier stand-in, which
 *    plays every call back through the signed webhooks (answered, held 0.2-1 s). The dialer runs on a
 *    clock moved one second per tick, so calls_per_minute bounds the clock, not the wall, and the
 *    wall time measures the platform: dial decisions (calls started) per second, tick latency, and
 *    the highest number of concurrent calls the carrier saw (must never exceed 50).
 * Results: bench/results/campaigns.json. Other sessions share this 2-core machine: the load averages are recorded.
 * BENCH_CAMPAIGNS_PARTS=upload re-runs the upload alone: the recorded dialer figures are kept, the
 * upload's are replaced (with the date and load of their own run) and the replaced ones kept under
 * `earlier_upload_runs`.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { loadConfig } from '../src/config.ts';
import { openDatabase, runMigrations } from '../src/db/database.ts';
import { buildApp } from '../src/app.ts';
import { buildServices } from '../src/services.ts';
import { CAMPAIGN_PLACE_CALL } from '../src/modules/campaigns/jobs.ts';
import { provisionOrganization } from '../src/modules/organizations/service.ts';
import { CreditLedger } from '../src/modules/billing/ledger.ts';
import { startCarrierStandIn } from '../test/helpers/carrier-standin.ts';
import { loadAverage, machine, percentilesUs, settle, startChild, writeResult } from './lib.ts';
import { benchDatabase } from './seed.ts';
import { transaction } from '../src/db/unit-of-work.ts';

const UPLOAD_CONTACTS = Number(process.env.BENCH_UPLOAD_CONTACTS ?? 100_000);
const CAMPAIGN_CONTACTS = Number(process.env.BENCH_CAMPAIGN_CONTACTS ?? 10_000);
const MAX_CONCURRENCY = 50;
const PARTS = (process.env.BENCH_CAMPAIGNS_PARTS ?? 'upload,dialer').split(',');

const databaseUrl = await benchDatabase('campaigns');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sbcampaigns-'));
const secrets = { JWT_SECRET: 'bench-secret-0123456789-0123456789', ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64') };
const setupDb = await openDatabase({ databaseUrl, dataDir, poolSize: 4 });
await runMigrations(setupDb);
const machineBefore = { ...machine(), load_after_settle: await settle() };

async function api(base: string, org: { headers: Record<string, string> }, method: string, url: string, body?: unknown) {
  const res = await fetch(base + url, { method, headers: { ...org.headers, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
  const json = (await res.json()) as { data: any };
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(json)}`);
  return json.data;
}

async function newOrg(name: string) {
  const org = await provisionOrganization(setupDb.db, { name: `${name} ${Date.now()}` });
  await transaction(setupDb.db, (tx) => new CreditLedger(tx).credit(org.organization_id, 'adjustment', `bench-${org.organization_id}`, 1_000_000, 'bench'));
  return { id: org.organization_id, headers: { 'x-api-key': org.api_key.key, 'x-organization-id': org.organization_id } };
}

function rssOf(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

// ---- upload: 100,000 contacts streamed as multipart to the real server --------------------------
const server = await startChild('app', { DATABASE_URL: databaseUrl, DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...secrets });
const uploader = await newOrg('campaigns upload bench');
const agent = await api(server.url, uploader, 'POST', '/api/agents', { agent_name: 'Bench agent' });
const number = await api(server.url, uploader, 'POST', '/api/phone-numbers', {
  phone_number: `+1999${String(Date.now()).slice(-8)}`, provider: 'sip', supports_outbound: true, sip_trunk_name: 'bench', sip_username: 'u',
  sip_password: 'bench-password', sip_server_address: 'sip.example.com', inbound_room_name: 'bench-',
});
const campaign = await api(server.url, uploader, 'POST', '/api/campaigns', {
  name: 'Upload bench', agent_id: agent.agent_id, from_phone_number_id: number.phone_number_id,
  schedule: { timezone: 'UTC', windows: [{ days: ['mon'], start: '09:00', end: '17:00' }] },
});
await new Promise((r) => setTimeout(r, 2000)); // the server's heap settles after start-up
const rssBefore = rssOf(server.child.pid!);
let rssPeak = rssBefore;
const sampler = setInterval(() => { rssPeak = Math.max(rssPeak, rssOf(server.child.pid!)); }, 50);
// The server's own breakdown (bench/serve.ts answers 'memory'), every 250 ms: the sample with the
// highest RSS tells whether the growth is heap (live or garbage), buffers or native memory.
let memoryAtPeak: NodeJS.MemoryUsage | undefined;
const onMemory = (m: any) => { if (m?.memory && (!memoryAtPeak || m.memory.rss > memoryAtPeak.rss)) memoryAtPeak = m.memory; };
server.child.on('message', onMemory);
const memorySampler = setInterval(() => server.child.send('memory'), 250);
const boundary = `----bench${Date.now()}`;
async function* multipart() {
  yield `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="contacts.csv"\r\nContent-Type: text/csv\r\n\r\nphone_number,first_name,account\r\n`;
  for (let i = 0; i < UPLOAD_CONTACTS; i += 1000) {
    let chunk = '';
    for (let j = i; j < Math.min(UPLOAD_CONTACTS, i + 1000); j++) chunk += `+1555${String(1_000_000 + j).padStart(7, '0')},Name ${j},acct-${j}\r\n`;
    yield chunk;
  }
  yield `\r\n--${boundary}--\r\n`;
}
const uploadStarted = performance.now();
const uploaded = await new Promise<any>((resolve, reject) => {
  const url = new URL(`/api/campaigns/${campaign.campaign_id}/contacts`, server.url);
  const req = http.request(url, { method: 'POST', headers: { ...uploader.headers, 'content-type': `multipart/form-data; boundary=${boundary}` } }, (res) => {
    let text = '';
    res.on('data', (d) => { text += d; });
    res.on('end', () => (res.statusCode === 200 ? resolve(JSON.parse(text).data) : reject(new Error(`${res.statusCode} ${text.slice(0, 300)}`))));
  });
  req.on('error', reject);
  Readable.from(multipart()).pipe(req);
});
const uploadSeconds = (performance.now() - uploadStarted) / 1000;
clearInterval(sampler);
clearInterval(memorySampler);
await server.stop();
const mb = (n: number) => Number((n / 2 ** 20).toFixed(1));
const upload = {
  contacts: UPLOAD_CONTACTS, accepted: uploaded.accepted, rejected: uploaded.rejected_count,
  seconds: Number(uploadSeconds.toFixed(2)), contacts_per_second: Math.round(UPLOAD_CONTACTS / uploadSeconds),
  server_rss_before_mb: Number((rssBefore / 2 ** 20).toFixed(1)), server_rss_peak_mb: Number((rssPeak / 2 ** 20).toFixed(1)),
  server_rss_growth_mb: Number(((rssPeak - rssBefore) / 2 ** 20).toFixed(1)), target_growth_mb: 64,
  server_memory_at_peak_mb: memoryAtPeak && Object.fromEntries(Object.entries(memoryAtPeak).map(([k, v]) => [k, mb(v)])),
};
console.log('upload', upload);

if (!PARTS.includes('dialer')) {
  await setupDb.close();
  const previous = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, 'results', 'campaigns.json'), 'utf8'));
  const { upload: replaced, earlier_upload_runs: earlier = [], ...kept } = previous;
  const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: import.meta.dirname, encoding: 'utf8' }).trim();
  const rerun = { ...upload, re_run_alone: true, commit, date: machineBefore.date, load_before: machineBefore.load_before, load_after_settle: machineBefore.load_after_settle, load_after: loadAverage() };
  const file = writeResult('campaigns', { ...kept, upload: rerun, earlier_upload_runs: [...earlier, replaced] });
  console.log(`written ${file} (upload re-run alone; the dialer figures are those of ${previous.machine.date})`);
  process.exit(0);
}

// ---- dialer: 10,000 contacts, max_concurrency 50, against the carrier stand-in --------------------
const carrier = await startCarrierStandIn();
carrier.autoPlay = () => ({ result: 'answered', durationSeconds: 30, holdMs: 200 + Math.round(Math.random() * 800), brief: true });
const clock = { at: Date.parse('2026-06-01T10:00:00Z') };
const port = await new Promise<number>((resolve) => {
  const probe = http.createServer().listen(0, '127.0.0.1', () => { const p = (probe.address() as { port: number }).port; probe.close(() => resolve(p)); });
});
const config = loadConfig({
  ...process.env, DATABASE_URL: databaseUrl, DATA_DIR: dataDir, LOG_LEVEL: 'silent', BOOTSTRAP: 'false', ...secrets,
  CARRIER_A_API_URL: carrier.url, PUBLIC_BASE_URL: `http://127.0.0.1:${port}`, RUNTIME_STREAM_URL: 'wss://runtime.example.test/stream',
  RATE_LIMIT_PER_MINUTE: '100000000', RATE_LIMIT_PUBLIC_PER_MINUTE: '100000000',
});
const database = await openDatabase({ databaseUrl, dataDir, poolSize: 10 });
const services = await buildServices(config, database, { now: () => new Date(clock.at) });
const app = await buildApp(services);
await app.listen({ port, host: '127.0.0.1' });
const base = `http://127.0.0.1:${port}`;
const dialerOrg = await newOrg('campaigns dialer bench');
await services.limits.setMaxConcurrentCalls(dialerOrg.id, 100);
const integration = await api(base, dialerOrg, 'POST', '/api/integrations', {
  name: 'Carrier', provider: 'carrier_a', category: 'telephony', credentials: { account_sid: carrier.account.sid, auth_token: carrier.account.token },
});
const fromNumber = `+1888${String(Date.now()).slice(-8)}`;
carrier.addNumber(fromNumber);
const dialAgent = await api(base, dialerOrg, 'POST', '/api/agents', { agent_name: 'Dialer bench' });
const imported = await api(base, dialerOrg, 'POST', '/api/phone-numbers', {
  phone_number: fromNumber, provider: 'carrier_a', integration_id: integration.integration_id, supports_inbound: true, supports_outbound: true,
});
const dialCampaign = await api(base, dialerOrg, 'POST', '/api/campaigns', {
  name: 'Dialer bench', agent_id: dialAgent.agent_id, from_phone_number_id: imported.phone_number_id, max_concurrency: MAX_CONCURRENCY, calls_per_minute: 600,
  schedule: { timezone: 'UTC', windows: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], start: '00:00', end: '24:00' }] },
});
for (let i = 0; i < CAMPAIGN_CONTACTS; i += 5000) {
  const contacts = Array.from({ length: Math.min(5000, CAMPAIGN_CONTACTS - i) }, (_, k) => ({ phone_number: `+1556${String(1_000_000 + i + k).padStart(7, '0')}` }));
  await api(base, dialerOrg, 'POST', `/api/campaigns/${dialCampaign.campaign_id}/contacts`, { contacts });
}
await api(base, dialerOrg, 'POST', `/api/campaigns/${dialCampaign.campaign_id}/start`);

const tickMs: number[] = [];
let dialed = 0;
let maxInProgress = 0;
const dialStarted = performance.now();
for (;;) {
  const started = performance.now();
  const result = await services.dialer.tick(dialerOrg.id, dialCampaign.campaign_id);
  tickMs.push(performance.now() - started);
  dialed += result.dialed;
  // The placement worker's part: every queued placement, at once.
  for (;;) {
    const jobs = await services.queue.boss.fetch<any>(CAMPAIGN_PLACE_CALL.name, { batchSize: 100 });
    if (!jobs.length) break;
    await Promise.all(jobs.map((job) => services.dialer.place(job.data)));
    await services.queue.boss.complete(CAMPAIGN_PLACE_CALL.name, jobs.map((job) => job.id));
  }
  const { progress, status } = await api(base, dialerOrg, 'GET', `/api/campaigns/${dialCampaign.campaign_id}`);
  maxInProgress = Math.max(maxInProgress, progress.in_progress);
  if (status === 'completed' || result.next === null) break;
  if (result.dialed === 0) await new Promise((r) => setTimeout(r, 20));
  clock.at += 1000;
}
while ((await api(base, dialerOrg, 'GET', `/api/campaigns/${dialCampaign.campaign_id}`)).status !== 'completed') await new Promise((r) => setTimeout(r, 100));
const dialSeconds = (performance.now() - dialStarted) / 1000;
const final = await api(base, dialerOrg, 'GET', `/api/campaigns/${dialCampaign.campaign_id}`);
await app.close();
await services.close();
await database.close();
await carrier.close();
await setupDb.close();

const dialer = {
  contacts: CAMPAIGN_CONTACTS, max_concurrency: MAX_CONCURRENCY, calls_placed: carrier.placed.length, calls_started_by_ticks: dialed,
  seconds: Number(dialSeconds.toFixed(1)), dial_decisions_per_second: Number((dialed / dialSeconds).toFixed(1)),
  tick_latency: percentilesUs(tickMs), ticks: tickMs.length,
  max_concurrent_calls_seen_by_carrier: carrier.active.max, max_in_progress_reported: maxInProgress, progress: final.progress,
};
console.log('dialer', dialer);
const file = writeResult('campaigns', { machine: machineBefore, load_after: loadAverage(), upload, dialer });
console.log(`written ${file}`);
if (carrier.active.max > MAX_CONCURRENCY) throw new Error(`max_concurrency broken: ${carrier.active.max} concurrent calls`);
