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
 * Results: bench/results/console.json. `npm run bench -- console` (builds nothing: run npm install first).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { chromium } from 'playwright-core';
import { openDatabase, runMigrations } from '../src/db/database.ts';
import { provisionOrganization } from '../src/modules/organizations/service.ts';
import { CHROMIUM } from '../test/helpers/browser.ts';
import { loadAverage, machine, settle, startChild, writeResult } from './lib.ts';
import { benchDatabase } from './seed.ts';

const POSTGRES = process.env.BENCH_CONSOLE_POSTGRES === '1';
const CALLS = Number(process.env.BENCH_CONSOLE_CALLS ?? (POSTGRES ? 1_000_000 : 10_000));
const RUNS = Number(process.env.BENCH_CONSOLE_RUNS ?? 7);
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
const seedSeconds = (performance.now() - seedStart) / 1000;
await database.close(); // one process owns an embedded data directory: the server's, from here on

const machineBefore = { ...machine(), load_after_settle: await settle() };
const server = await startChild('app', POSTGRES ? { DATABASE_URL: databaseUrl!, DATA_DIR: dataDir } : { DATA_DIR: dataDir });
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
  },
  calls_table: {
    database: POSTGRES ? 'PostgreSQL 15 (same 2 cores)' : 'embedded (PGlite)', calls_in_organization: CALLS, seed_seconds: Number(seedSeconds.toFixed(1)),
    signed_in_with: 'API key for the tab (sessionStorage)', page_size: 50,
    cold_cache: stats(cold), warm_cache: stats(warm), target_ms: 1000,
  },
};
console.log(JSON.stringify(result, null, 2));
console.log(`written to ${writeResult(POSTGRES ? 'console-postgres' : 'console', result)}`);
