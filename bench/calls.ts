/**
 * Calls benchmark on PostgreSQL, 100 organizations seeded directly in SQL (bench/seed.ts: separate
 * databases for 10,000 and 1,000,000 calls), the real server in a child process:
 *  - GET /api/calls?limit=50 at 1,000,000 calls, 50 connections: a deep page (cursor ~9,000 calls in)
 *    against the first page (target within 1.2×); the list against its honest baseline is bench/list.ts;
 *  - analytics, 30 days per day and 24 h per minute, at 10,000 and at 1,000,000 calls: one connection,
 *    latency in microseconds (target p50 < 20 ms, within 1.2× between the two), and 10 connections;
 *  - download of a 500 MB recording: the server's RSS growth (target < 64 MB).
 * Results: bench/results/calls.json, with the machine's load before and after.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { encodeCursor } from '../src/core/cursor.ts';
import { wavHeader } from '../src/modules/calls/recordings/audio.ts';
import { load, loadAverage, machine, sequentialLatency, startChild, writeResult, type LoadResult } from './lib.ts';
import { benchDatabase, ORGS, seededCalls } from './seed.ts';

// Two databases, seeded once and reused: 10,000 calls (100 per organization) and 1,000,000 (10,000 each).
const smallUrl = await benchDatabase('calls_10k');
const databaseUrl = await benchDatabase('calls_1m');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sbcalls-'));
const CONNECTIONS = 50;

async function analytics(app: { url: string }, label: string, headers: Record<string, string>) {
  const today = new Date().toISOString().slice(0, 10);
  const monthAgo = new Date(Date.now() - 30 * 86_400_000).toISOString().slice(0, 10);
  const dayAgo = new Date(Date.now() - 86_400_000).toISOString();
  const days = `${app.url}/api/analytics/calls/daily?start_date=${monthAgo}&end_date=${today}&timezone=Europe/Berlin`;
  const minutes = `${app.url}/api/analytics/calls/daily?start_time=${encodeURIComponent(dayAgo)}`;
  // One connection, one request after another: the request's own latency, in microseconds (milliseconds
  // are too coarse here). Ten connections: under load, where queueing multiplies any difference.
  return {
    days_30: await sequentialLatency(days, headers, { requests: 1000 }),
    minutes_24h: await sequentialLatency(minutes, headers, { requests: 1000 }),
    days_30_10_connections: await load(`${label}: 30 days daily, 10 connections`, days, headers, { connections: 10, duration: 5 }),
    minutes_24h_10_connections: await load(`${label}: 24 h per minute, 10 connections`, minutes, headers, { connections: 10, duration: 5 }),
  };
}

const small = await seededCalls({ url: smallUrl, perOrg: 100 });
await small.database.close();
const large = await seededCalls({ url: databaseUrl, perOrg: 10_000 });
const q = (text: string, params: unknown[] = []) => large.database.pool.query(text, params);
const result: Record<string, unknown> = { ...machine(), database: 'PostgreSQL 15, same 2 cores as server and load', organizations: ORGS, seed_10k: small.seed, seed_1m: large.seed };
let app = await startChild('app', { DATABASE_URL: smallUrl, DATA_DIR: dataDir, IN_PROCESS_WORKER: 'false' });
try {
  await load('warm-up', `${app.url}/api/analytics/calls/daily`, small.headers, { connections: 4, duration: 2 });
  const smallSeries = await analytics(app, '10k calls', small.headers);
  await app.stop();

  const { orgId, headers } = large;
  app = await startChild('app', { DATABASE_URL: databaseUrl, DATA_DIR: dataDir, IN_PROCESS_WORKER: 'false' });
  await load('warm-up', `${app.url}/api/calls?limit=50`, headers, { connections: 10, duration: 2 });
  const largeSeries = await analytics(app, '1M calls', headers);

  // Deep pages cost what the first page costs (keyset on an index): three interleaved rounds, the median.
  const { rows: [deep] } = await q('SELECT created_at, call_sid FROM calls WHERE client_id = $1 ORDER BY created_at DESC, call_sid DESC OFFSET 9000 LIMIT 1', [orgId]);
  const deepCursor = encodeCursor({ value: deep.created_at.toISOString(), id: deep.call_sid });
  const rounds: Array<{ first: LoadResult; deep: LoadResult }> = [];
  for (let round = 0; round < 3; round++) {
    rounds.push({
      first: await load('calls first page', `${app.url}/api/calls?limit=50`, headers, { connections: CONNECTIONS, duration: 6 }),
      deep: await load('calls deep page', `${app.url}/api/calls?limit=50&cursor=${deepCursor}`, headers, { connections: CONNECTIONS, duration: 6 }),
    });
  }
  const depth = (r: (typeof rounds)[number]) => r.deep.latency_ms.p99 / Math.max(r.first.latency_ms.p99, 1);
  const median = [...rounds].sort((a, b) => depth(a) - depth(b))[1]!;

  // A 500 MB WAV recording on the local store, downloaded whole over HTTP from a fresh server
  // (so the garbage of the load above does not count as the download's memory).
  await app.stop();
  app = await startChild('app', { DATABASE_URL: databaseUrl, DATA_DIR: dataDir, IN_PROCESS_WORKER: 'false' });
  await load('warm-up', `${app.url}/api/calls?limit=50`, headers, { connections: 4, duration: 1 });
  const { rows: [target] } = await q('SELECT call_sid, to_number FROM calls WHERE client_id = $1 LIMIT 1', [orgId]);
  const key = `${orgId}/recordings/${target.call_sid}/recording.wav`;
  const file = path.join(dataDir, 'objects', key);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const dataBytes = 500 * 1024 * 1024;
  const out = fs.openSync(file, 'w');
  fs.writeSync(out, wavHeader(dataBytes));
  const block = Buffer.alloc(8 * 1024 * 1024, 1);
  for (let written = 0; written < dataBytes; written += block.length) fs.writeSync(out, block);
  fs.closeSync(out);
  const size = fs.statSync(file).size;
  await q("UPDATE calls SET recording_enabled = true, recording_key = $1, recording_content_type = 'audio/wav', recording_bytes = $2 WHERE client_id = $4 AND call_sid = $3", [key, size, target.call_sid, orgId]);
  const rss = () => Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${app.child.pid}/status`, 'utf8'))![1]) / 1024;
  const rssBefore = rss();
  let rssMax = rssBefore;
  const sampler = setInterval(() => { rssMax = Math.max(rssMax, rss()); }, 10);
  const started = performance.now();
  const response = await fetch(`${app.url}/api/calls/${target.call_sid}/recording/download`, { headers });
  let received = 0;
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) received += chunk.length;
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  fs.rmSync(file);
  await q('UPDATE calls SET recording_enabled = false, recording_key = NULL, recording_content_type = NULL, recording_bytes = NULL WHERE client_id = $2 AND call_sid = $1', [target.call_sid, orgId]);

  const ratio = (a: number, b: number) => Number((a / b).toFixed(2));
  Object.assign(result, {
    list_pages: {
      connections: CONNECTIONS, first_page: median.first, deep_page: { ...median.deep, position: 9000 },
      deep_vs_first_p99: Number(depth(median).toFixed(2)), target_deep_vs_first: 1.2,
      rounds: rounds.map((r) => ({ first_rps: r.first.requests_per_second, first_p99: r.first.latency_ms.p99, deep_rps: r.deep.requests_per_second, deep_p99: r.deep.latency_ms.p99 })),
      note: 'the list against its honest baseline is bench/list.ts',
    },
    analytics: {
      at_10k_calls: smallSeries,
      at_1m_calls: largeSeries,
      one_connection_ratio_1m_vs_10k: {
        days_30_p50: ratio(largeSeries.days_30.p50_us, smallSeries.days_30.p50_us), days_30_mean: ratio(largeSeries.days_30.mean_us, smallSeries.days_30.mean_us),
        minutes_24h_p50: ratio(largeSeries.minutes_24h.p50_us, smallSeries.minutes_24h.p50_us), minutes_24h_mean: ratio(largeSeries.minutes_24h.mean_us, smallSeries.minutes_24h.mean_us),
      },
      targets: { p50_ms: 20, ratio: 1.2 },
    },
    download_500mb: {
      status: response.status, bytes: received, content_length: Number(response.headers.get('content-length')), seconds: Number(seconds.toFixed(2)),
      rss_before_mb: Math.round(rssBefore), rss_max_mb: Math.round(rssMax), rss_growth_mb: Math.round(rssMax - rssBefore), target_growth_mb: 64,
    },
    load_after: loadAverage(),
  });
  console.log(JSON.stringify(result, null, 2));
  console.log(`written to ${writeResult('calls', result)}`);
} finally {
  await app.stop();
  await large.database.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
