/**
 * `npm run bench -- suite`: how long `npm test` takes serially (one shard, the old run) and in shards,
 * in interleaved rounds on the embedded database (`DATABASE_URL` set: on that PostgreSQL), with the
 * wall time, the CPU the run used (its process tree, as /usr/bin/time reports it) and the load
 * before and after each run. Every run must pass; a failed run is recorded and not counted.
 *
 *   SUITE_ROUNDS (default 2), SUITE_SHARDS (default "1,3")
 */
import { spawn } from 'node:child_process';
import { loadAverage, machine, median, settle, writeResult } from './lib.ts';

const ROUNDS = Number(process.env.SUITE_ROUNDS ?? 2);
const SHARD_COUNTS = (process.env.SUITE_SHARDS ?? '1,3').split(',').map(Number);
const ROOT = new URL('..', import.meta.url).pathname;

interface Run { shards: number; round: number; wall_s: number; cpu_s: number; passed: boolean; summary: string; load_before: number[]; load_after: number[] }

/** One `npm test` run; /usr/bin/time reports the CPU of its process tree (the shards and what they waited for). */
function runSuite(shards: number): Promise<{ wall_s: number; cpu_s: number; passed: boolean; summary: string }> {
  const started = performance.now();
  const child = spawn('/usr/bin/time', ['-f', 'CPU %U %S', process.execPath, 'scripts/run-tests.ts'], {
    cwd: ROOT, env: { ...process.env, CI: 'true', TEST_SHARDS: String(shards) }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => { out = (out + c.toString()).slice(-20_000); });
  child.stderr.on('data', (c: Buffer) => { out = (out + c.toString()).slice(-20_000); });
  return new Promise((resolve) => {
    child.once('close', (code) => {
      const cpu = /CPU ([\d.]+) ([\d.]+)/.exec(out);
      const summary = out.split('\n').filter((l) => /^ℹ (tests|pass|fail) /.test(l)).join(', ');
      resolve({ wall_s: (performance.now() - started) / 1000, cpu_s: cpu ? Number(cpu[1]) + Number(cpu[2]) : NaN, passed: code === 0, summary });
    });
  });
}

const info = machine();
const runs: Run[] = [];
for (let round = 1; round <= ROUNDS; round++) {
  for (const shards of SHARD_COUNTS) {
    const loadBefore = await settle(60);
    const result = await runSuite(shards);
    runs.push({ shards, round, ...result, wall_s: Number(result.wall_s.toFixed(1)), load_before: loadBefore, load_after: loadAverage() });
    console.log(`round ${round}, ${shards} shard(s): ${result.wall_s.toFixed(0)} s wall, ${result.cpu_s.toFixed(0)} s CPU, ${result.passed ? 'passed' : 'FAILED'} (${result.summary})`);
  }
}

const bySharding = Object.fromEntries(SHARD_COUNTS.map((shards) => {
  const passed = runs.filter((r) => r.shards === shards && r.passed);
  return [`${shards}_shards`, { runs: passed.length, median_wall_s: median(passed.map((r) => r.wall_s)), median_cpu_s: median(passed.map((r) => r.cpu_s)) }];
}));
const file = writeResult('suite', {
  ...info, database: process.env.DATABASE_URL ? 'postgresql' : 'embedded', rounds: ROUNDS, load_after: loadAverage(), by_sharding: bySharding, runs,
});
console.log(JSON.stringify(bySharding, null, 2), `\n→ ${file}`);
