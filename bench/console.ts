/**
 * The web console's benchmark (issue 14):
 *  - initial JavaScript: the scripts index.html loads before anything renders (its module script and
 *    modulepreloads), gzip-compressed as a server or CDN would send them (target ≤ 300 KB); the lazily
 *    loaded pages' chunks are listed apart;
 *  - navigation to the calls table rendered, in headless Chromium, for an organization of 10,000 calls
 *    on the embedded database (the server in its own process, signed in with an API key for the tab):
 *    the page's own mark `calls-table-rendered` (ms since navigation start), with an empty cache
 *    (a new browser context each time) and with a warm one (a reload). Target < 1 s.
 *    With BENCH_CONSOLE_POSTGRES=1: 1,000,000 calls in one organization on PostgreSQL (a fresh bench
 *    database `…_console`), results in bench/results/console-postgres.json.
 *  - initial JavaScript and CSS as transferred (issue 31): index.html, its module script, modulepreloads
 *    and stylesheets fetched from the running server with `accept-encoding: br, gzip`, as a browser
 *    asks; the body bytes the server sent (brotli or gzip, by @fastify/compress; headers not counted)
 *    and their size decoded.
 *  - "Talk to agent" (issue 31): the end of the caller's speech to the first agent audio the page plays,
 *    minus the stand-ins' fixed delays (target p95 < 60 ms): bench/console-talk.ts, which says exactly
 *    what is measured and subtracted. BENCH_CONSOLE_TALK_RUNS preview calls (default 10: 40 turns, so the p95 is not the second-slowest of twenty) of
 *    BENCH_CONSOLE_TALK_TURNS questions (default 4); 0 runs skips it.
 * Results: bench/results/console.json. `npm run bench -- console` (builds nothing: run npm install first).
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { chromium } from 'playwright-core';
import { openDatabase, runMigrations } from '../src/db/database.ts';
import { CreditLedger } from '../src/modules/billing/ledger.ts';
import { provisionOrganization } from '../src/modules/organizations/service.ts';
import { CHROMIUM } from '../test/helpers/browser.ts';
import { freePort } from '../test/helpers/net.ts';
import { measureTalk } from './console-talk.ts';
import { loadAverage, machine, settle, startChild, writeResult } from './lib.ts';
import { benchDatabase } from './seed.ts';
import { transaction } from '../src/db/unit-of-work.ts';

const POSTGRES = process.env.BENCH_CONSOLE_POSTGRES === '1';
const CALLS = Number(process.env.BENCH_CONSOLE_CALLS ?? (POSTGRES ? 1_000_000 : 10_000));
const RUNS = Number(process.env.BENCH_CONSOLE_RUNS ?? 7);
const TALK_RUNS = Number(process.env.BENCH_CONSOLE_TALK_RUNS ?? 10);
const TALK_TURNS = Number(process.env.BENCH_CONSOLE_TALK_TURNS ?? 4);
const DIST = path.resolve(import.meta.dirname, '../console/dist');

// ---- initial JavaScript ----------------------------------------------------------------------------
const html = fs.readFileSync(path.join(DIST, 'index.html'), 'utf8');
const initial = [...html.matchAll(/<script[^>]+src="([^"]+\.js)"|<link[^>]+rel="modulepreload"[^>]+href="([^"]+\.js)"/g)].map((m) => (m[1] ?? m[2])!);
const gz = (file: string) => zlib.gzipSync(fs.readFileSync(path.join(DIST, file))).length;
const initialGzip = initial.reduce((t, f) => t + gz(f), 0);
const lazy = fs.readdirSync(path.join(DIST, 'assets')).filter((f) => f.endsWith('.js') && !initial.includes(`/assets/${f}`))
  .map((f) => ({ file: f, gzip_kb: Number((gz(`/assets/${f}`) / 1024).toFixed(1)) }));
const css = fs.readdirSync(path.join(DIST, 'assets')).filter((f) => f.endsWith('.css')).reduce((t, f) => t + gz(`/assets/${f}`), 0);
console.log(`initial JS: ${initial.join(', ')} = ${(initialGzip / 1024).toFixed(1)} KB gzip`);

// ---- an organization of CALLS calls on the embedded database (or PostgreSQL) ----------------------------
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sbconsole-'));
const databaseUrl = POSTGRES ? await benchDatabase('console') : undefined;
const database = await openDatabase({ databaseUrl, dataDir, poolSize: 2 });
await runMigrations(database);
// Each run measures one organization of CALLS calls: the previous runs' are removed first.
if (POSTGRES) await database.pool.query('TRUNCATE calls, call_rollups CASCADE; DELETE FROM organizations');
const org = await provisionOrganization(database.db, { name: 'Console bench' });
const seedStart = performance.now();
await database.pool.query(`INSERT INTO calls (call_sid, client_id, agent_id, agent_name, call_type, status, from_number, to_number, recording_enabled,
    start_time, end_time, end_reason, duration_seconds, turn_count, total_cost, billing_status, created_at, updated_at)
  SELECT 'call_' || substr(md5($1 || g::text), 1, 20), $1, 'agent_bench00000' || (g % 5), 'Bench agent ' || (g % 5),
    (ARRAY['inbound','outbound'])[1 + g % 2], 'completed', '+14155550100', '+1415555' || lpad((g % 10000)::text, 4, '0'), false,
    t, t + (d || ' seconds')::interval, 'user_hangup', d, 6, round((d * 0.05)::numeric, 4), 'billed', t, t
  FROM (SELECT g, now() - random() * interval '30 days' AS t, 20 + floor(random() * 400) AS d FROM generate_series(1, $2::int) g) s`, [org.organization_id, CALLS]);
if (POSTGRES) await database.pool.query('ANALYZE calls');
// The preview calls are charged like calls.
await transaction(database.db, (tx) => new CreditLedger(tx).credit(org.organization_id, 'adjustment', `bench-${Date.now()}`, 1000, 'console bench'));
const seedSeconds = (performance.now() - seedStart) / 1000;
await database.close(); // one process owns an embedded data directory: the server's, from here on

const machineBefore = { ...machine(), load_after_settle: await settle() };
// A port known beforehand: the preview session's WebSocket address is built from PUBLIC_BASE_URL. The
// stand-ins listen on 127.0.0.1, which the outbound rule must allow.
const port = await freePort();
const server = await startChild('app', {
  ...(POSTGRES ? { DATABASE_URL: databaseUrl! } : {}), DATA_DIR: dataDir,
  BENCH_PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}`, ALLOWED_NETWORKS: '127.0.0.1/32',
});

// ---- initial JavaScript and CSS as the server sends them -------------------------------------------------
/** GET as a browser asks: the body's bytes as sent (encoded as the server chose) and decoded. */
function transferred(url: string): Promise<{ encoding: string; transferred: number; uncompressed: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http.get(url, { headers: { 'accept-encoding': 'br, gzip' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        const raw = Buffer.concat(chunks);
        const encoding = String(res.headers['content-encoding'] ?? 'identity');
        const body = encoding === 'br' ? zlib.brotliDecompressSync(raw) : encoding === 'gzip' ? zlib.gunzipSync(raw) : raw;
        if (res.statusCode !== 200) return reject(new Error(`${url}: ${res.statusCode}`));
        resolve({ encoding, transferred: raw.length, uncompressed: body.length, body });
      });
    }).on('error', reject);
  });
}
const indexHtml = await transferred(`${server.url}/`);
const served = indexHtml.body.toString('utf8');
const assetsOf = (pattern: RegExp) => [...served.matchAll(pattern)].map((m) => m[1]!);
const initialScripts = [...assetsOf(/<script[^>]+type="module"[^>]+src="([^"]+)"/g), ...assetsOf(/<link[^>]+rel="modulepreload"[^>]+href="([^"]+)"/g)];
const initialStyles = assetsOf(/<link[^>]+rel="stylesheet"[^>]+href="([^"]+)"/g);
const sent = async (files: string[]) => {
  const each = await Promise.all(files.map(async (file) => {
    const { encoding, transferred: bytes, uncompressed } = await transferred(`${server.url}${file}`);
    return { file, encoding, transferred_bytes: bytes, uncompressed_bytes: uncompressed };
  }));
  const kb = (bytes: number) => Number((bytes / 1024).toFixed(1));
  return { files: each, transferred_kb: kb(each.reduce((t, f) => t + f.transferred_bytes, 0)), uncompressed_kb: kb(each.reduce((t, f) => t + f.uncompressed_bytes, 0)) };
};
const asTransferred = {
  asked_with: 'accept-encoding: br, gzip (body bytes; headers not counted)',
  index_html: { encoding: indexHtml.encoding, transferred_bytes: indexHtml.transferred, uncompressed_bytes: indexHtml.uncompressed },
  initial_js: await sent(initialScripts),
  initial_css: await sent(initialStyles),
};
console.log(`as transferred: initial JS ${asTransferred.initial_js.transferred_kb} KB (${asTransferred.initial_js.uncompressed_kb} KB decoded), CSS ${asTransferred.initial_css.transferred_kb} KB (${asTransferred.initial_css.uncompressed_kb} KB)`);

const browser = await chromium.launch({
  executablePath: CHROMIUM,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const credentials = JSON.stringify({ apiKey: org.api_key.key, orgId: org.organization_id });

async function rendered(page: import('playwright-core').Page): Promise<number> {
  await page.locator('[data-testid="calls-table"] tbody tr').first().waitFor({ timeout: 30_000 });
  return Number(await page.evaluate("performance.getEntriesByName('calls-table-rendered')[0].startTime"));
}

const cold: number[] = [];
const warm: number[] = [];
for (let i = 0; i < RUNS; i++) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.addInitScript(`sessionStorage.setItem('switchboard.apiKey', ${JSON.stringify(credentials)})`);
  const page = await context.newPage();
  await page.goto(`${server.url}/calls`);
  cold.push(await rendered(page));
  await page.reload();
  warm.push(await rendered(page));
  await context.close();
}
await browser.close();

// ---- Talk to agent, timed as the page plays it ---------------------------------------------------------
const loadBeforeTalk = loadAverage();
const talk = TALK_RUNS > 0 ? await measureTalk({ url: server.url, apiKey: org.api_key.key, orgId: org.organization_id, runs: TALK_RUNS, turns: TALK_TURNS }) : null;
if (talk) console.log(`talk: overhead p50 ${talk.overhead_ms.p50} p95 ${talk.overhead_ms.p95} ms over ${talk.samples_measured} turns (raw p50 ${talk.raw_ms.p50} ms)`);
await server.stop();
fs.rmSync(dataDir, { recursive: true, force: true });

const stats = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return { median_ms: Math.round(sorted[Math.floor(sorted.length / 2)]!), min_ms: Math.round(sorted[0]!), max_ms: Math.round(sorted.at(-1)!), runs: sorted.map(Math.round) };
};
const result = {
  machine: { ...machineBefore, load_after: loadAverage() },
  bundle: {
    initial_js_files: initial, initial_js_gzip_kb: Number((initialGzip / 1024).toFixed(1)), target_kb: 300,
    css_gzip_kb: Number((css / 1024).toFixed(1)), lazy_chunks: lazy,
    as_transferred: asTransferred,
  },
  calls_table: {
    database: POSTGRES ? 'PostgreSQL 15 (same 2 cores)' : 'embedded (PGlite)', calls_in_organization: CALLS, seed_seconds: Number(seedSeconds.toFixed(1)),
    signed_in_with: 'API key for the tab (sessionStorage)', page_size: 50,
    cold_cache: stats(cold), warm_cache: stats(warm), target_ms: 1000,
  },
  talk: talk ? { load_before: loadBeforeTalk, load_after: loadAverage(), ...talk } : null,
};
console.log(JSON.stringify(result, null, 2));
console.log(`written to ${writeResult(POSTGRES ? 'console-postgres' : 'console', result)}`);
