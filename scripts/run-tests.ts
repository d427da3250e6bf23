/**
 * `npm test`: the integration suite in parallel shards. Each shard is one `node --test` process
 * with --test-isolation=none, its own app and its own database (an embedded one each, or on
 * PostgreSQL a database of its own beside DATABASE_URL's), so shards never see each other's rows.
 * Most of a shard's time is spent waiting (timers, retries, child processes, the browser), so
 * shards overlap well even on two cores (bench/suite.ts; figures in docs/benchmarks.md).
 *
 * Files are dealt to shards by their last measured time (test/durations.json, longest first onto
 * the least loaded shard). Each shard's output is printed whole when it ends, and one summary of
 * the whole run closes the output in the runner's own format.
 *
 *   npm test                       every file, TEST_SHARDS shards (default 3)
 *   npm test -- test/calls.test.ts one file, one shard
 *   TEST_SHARDS=1 npm test         the old serial run
 *   TEST_WRITE_DURATIONS=1 npm test  rewrites test/durations.json after a whole passing run
 */
import { spawn } from 'node:child_process';
import { globSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { FailedTest } from '../test/reporters/shard-summary.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const DURATIONS_FILE = path.join(ROOT, 'test/durations.json');
const SUMMARY_KEYS = ['tests', 'suites', 'pass', 'fail', 'cancelled', 'skipped', 'todo'] as const;
const COUNT_OF: Record<(typeof SUMMARY_KEYS)[number], string> = {
  tests: 'tests', suites: 'suites', pass: 'passed', fail: 'failed', cancelled: 'cancelled', skipped: 'skipped', todo: 'todo',
};

interface ShardResult {
  code: number;
  counts?: Record<string, number>;
  fileMs: Record<string, number>;
  failures: FailedTest[];
}

const requested = process.argv.slice(2);
const files = requested.length
  ? requested
  : [...globSync('test/**/*.test.ts', { cwd: ROOT }), ...globSync('runtime/test/**/*.test.ts', { cwd: ROOT })].sort();
const shardCount = Math.max(1, Math.min(files.length, Number(process.env.TEST_SHARDS ?? (requested.length ? 1 : 3))));
const shards = deal(files, shardCount, readJson<Record<string, number>>(DURATIONS_FILE) ?? {}, companions(files));

const tmp = mkdtempSync(path.join(tmpdir(), 'sb-shards-'));
const databases = await shardDatabases(shardCount);
const started = performance.now();
let interrupted = false;
const children = new Set<ReturnType<typeof spawn>>();
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    interrupted = true;
    for (const child of children) child.kill('SIGTERM');
  });
}

let results: ShardResult[];
try {
  results = await Promise.all(shards.map((shardFiles, index) => runShard(index, shardFiles, databases.urls[index])));
} finally {
  await databases.drop();
  rmSync(tmp, { recursive: true, force: true });
}

printSlowest(results, 12);
printFailures(results.flatMap((r) => r.failures), 20);
const total = Object.fromEntries(SUMMARY_KEYS.map((key) => [key, results.reduce((n, r) => n + (r.counts?.[COUNT_OF[key]] ?? 0), 0)]));
for (const key of SUMMARY_KEYS) process.stdout.write(`ℹ ${key} ${total[key]}\n`);
process.stdout.write(`ℹ duration_ms ${(performance.now() - started).toFixed(3)}\n`);
const failed = interrupted || results.some((r) => r.code !== 0 || !r.counts);
if (!failed && !requested.length && process.env.TEST_WRITE_DURATIONS === '1') writeDurations(results);
process.exitCode = failed ? 1 : 0;

/**
 * Files that must run in one shard. test/permissions.test.ts checks that every operation runs the
 * auth matrix and every row of the permission table is checked by one; the matrices are registered
 * in-process by the files that call `runAuthMatrix(` as they load, so those files go with it.
 */
function companions(all: string[]): string[][] {
  const PERMISSIONS = 'test/permissions.test.ts';
  if (!all.includes(PERMISSIONS)) return [];
  const matrixFiles = all.filter((file) => /^\s*runAuthMatrix\(/m.test(readFileSync(path.join(ROOT, file), 'utf8')));
  return [[PERMISSIONS, ...matrixFiles.filter((file) => file !== PERMISSIONS)]];
}

/**
 * Longest first onto the shard with the least time so far, a group of companions as one piece;
 * files never measured count as the median.
 */
function deal(all: string[], count: number, durations: Record<string, number>, groups: string[][]): string[][] {
  const known = Object.values(durations).sort((a, b) => a - b);
  const median = known.length ? known[Math.floor(known.length / 2)]! : 1;
  const grouped = new Set(groups.flat());
  const pieces = [...groups, ...all.filter((file) => !grouped.has(file)).map((file) => [file])]
    .map((files) => ({ files, seconds: files.reduce((sum, file) => sum + (durations[file] ?? median), 0) }))
    .sort((a, b) => b.seconds - a.seconds);
  const buckets = Array.from({ length: count }, () => ({ seconds: 0, files: [] as string[] }));
  for (const { files: piece, seconds } of pieces) {
    const lightest = buckets.reduce((min, b) => (b.seconds < min.seconds ? b : min));
    lightest.files.push(...piece);
    lightest.seconds += seconds;
  }
  return buckets.map((b) => b.files.sort()).filter((b) => b.length > 0);
}

/** A JSON file's value, or undefined when it is missing or unreadable (a shard that died wrote no summary). */
function readJson<T>(file: string): T | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

/** The run's slowest files with their wall times, so a slow CI run's log says where its time went. */
function printSlowest(all: ShardResult[], count: number): void {
  const times = all.flatMap((r) => Object.entries(r.fileMs)).sort(([, a], [, b]) => b - a).slice(0, count);
  if (times.length < 2) return;
  process.stdout.write(`\nslowest files:\n${times.map(([file, ms]) => `  ${(ms / 1000).toFixed(1).padStart(7)} s  ${path.relative(ROOT, file)}`).join('\n')}\n\n`);
}

/**
 * Each failed test with its error, once more just above the summary: the shards' outputs come one
 * after another, so a failure's own report can sit thousands of lines above the end of the log.
 */
function printFailures(failures: FailedTest[], count: number): void {
  if (!failures.length) return;
  const shown = failures.slice(0, count).map(({ file, name, error }) =>
    `✖ ${path.relative(ROOT, file) || '(no file)'}: ${name}\n${error.replace(/^/gm, '    ')}`);
  const more = failures.length > count ? `\n… and ${failures.length - count} more failures above` : '';
  process.stdout.write(`failed tests:\n${shown.join('\n')}${more}\n\n`);
}

/** After a whole passing run with TEST_WRITE_DURATIONS=1: each file's wall time in seconds, for the next runs' dealing. */
function writeDurations(all: ShardResult[]): void {
  const seconds: Record<string, number> = {};
  for (const r of all) for (const [file, ms] of Object.entries(r.fileMs)) seconds[path.relative(ROOT, file)] = Math.round(ms / 100) / 10;
  const sorted = Object.fromEntries(Object.entries(seconds).sort(([a], [b]) => a.localeCompare(b)));
  writeFileSync(DURATIONS_FILE, `${JSON.stringify(sorted, null, 2)}\n`);
}

/**
 * One database URL per shard. Embedded: none (each shard's process creates its own). PostgreSQL:
 * shard 0 uses DATABASE_URL's database, the others get `<name>_shard<k>`, created empty here (the
 * suite migrates it) and dropped when the run ends.
 */
async function shardDatabases(count: number): Promise<{ urls: Array<string | undefined>; drop: () => Promise<void> }> {
  const base = process.env.DATABASE_URL;
  if (!base) return { urls: Array.from({ length: count }, () => undefined), drop: async () => {} };
  const url = new URL(base);
  const name = decodeURIComponent(url.pathname.slice(1));
  const extra = Array.from({ length: count - 1 }, (_, i) => `${name}_shard${i + 1}`);
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  const dropAll = async () => {
    for (const db of extra) await admin.query(`DROP DATABASE IF EXISTS "${db}" WITH (FORCE)`);
  };
  await dropAll();
  for (const db of extra) await admin.query(`CREATE DATABASE "${db}"`);
  const urls = [base, ...extra.map((db) => Object.assign(new URL(base), { pathname: `/${encodeURIComponent(db)}` }).toString())];
  return { urls, drop: async () => { await dropAll(); await admin.end(); } };
}

function runShard(index: number, shardFiles: string[], databaseUrl: string | undefined): Promise<ShardResult> {
  const summaryFile = path.join(tmp, `shard-${index}.json`);
  const args = [
    '--import', './src/module-hooks.ts', '--test', '--test-force-exit', '--test-isolation=none', '--test-global-setup=test/setup.ts',
    '--test-reporter=spec', '--test-reporter-destination=stdout',
    '--test-reporter=./test/reporters/shard-summary.ts', `--test-reporter-destination=${summaryFile}`,
    ...shardFiles,
  ];
  // A whole run: checks that need every file of a group (companions above) fail instead of skipping.
  const env: NodeJS.ProcessEnv = { ...process.env, TEST_WHOLE_RUN: requested.length ? '' : '1' };
  if (databaseUrl) env.DATABASE_URL = databaseUrl;
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  child.stderr.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  return new Promise((resolve) => {
    child.once('close', (code, signal) => {
      children.delete(child);
      const report = readJson<Omit<ShardResult, 'code'>>(summaryFile);
      const header = `\n== shard ${index + 1}/${shardCount}: ${shardFiles.length} file${shardFiles.length === 1 ? '' : 's'}, ${((performance.now() - started) / 1000).toFixed(0)} s, exit ${code ?? signal}\n`;
      process.stdout.write(header + withoutSummary(output));
      resolve({ code: code ?? 1, counts: report?.counts, fileMs: report?.fileMs ?? {}, failures: report?.failures ?? [] });
    });
  });
}

/** A shard's output without its closing `ℹ tests …` block: the run's own summary replaces them. */
function withoutSummary(output: string): string {
  const lines = output.split('\n');
  const start = lines.findLastIndex((line) => line.startsWith('ℹ tests '));
  if (start < 0) return output;
  const end = lines.findIndex((line, i) => i > start && line.startsWith('ℹ duration_ms '));
  if (end < 0) return output;
  return [...lines.slice(0, start), ...lines.slice(end + 1)].join('\n');
}
