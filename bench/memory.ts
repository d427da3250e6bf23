/**
 * The server's memory as `npm start` runs it (results: bench/results/memory.json): resident set size
 * once idle on PostgreSQL (target < 150 MB) and on the embedded database (target < 400 MB), and the
 * peak of the embedded database's first start in a fresh data directory (target < 600 MB), sampled
 * every 10 ms from the kernel (VmRSS; VmHWM for the peak).
 *
 * Then, on PostgreSQL, what load leaves behind (issue 33, target: back under 200 MB within 2 minutes):
 * BENCH_MEMORY_LOAD_SECONDS (default 300) of `GET /api/calls?limit=50` at 50 connections (autocannon),
 * then BENCH_MEMORY_IDLE_SECONDS (default 120) with no request, RSS read every 10 s.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { load, loadAverage, machine, npmStartArguments, procStatusMb, PROJECT_ROOT, writeResult } from './lib.ts';
import { benchDatabase, seededCalls } from './seed.ts';

const nodeArgs = npmStartArguments();

const LOAD_SECONDS = Number(process.env.BENCH_MEMORY_LOAD_SECONDS ?? 300);
const IDLE_SECONDS = Number(process.env.BENCH_MEMORY_IDLE_SECONDS ?? 120);

/** After the idle reading: list load, then idle, RSS sampled (MB) along the way. */
interface AfterLoad { headers: Record<string, string> }

/** Starts the server as npm start does and reports its memory at first listen and once idle (and, with `afterLoad`, under load and after it). */
async function measure(label: string, env: Record<string, string>, v8Flags: string[] = [], afterLoad?: AfterLoad) {
  const child = spawn(process.execPath, [...v8Flags, ...nodeArgs], { cwd: PROJECT_ROOT, env: { ...process.env, LOG_LEVEL: 'info', HOST: '127.0.0.1', PORT: '0', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  let peak = 0;
  const sampler = setInterval(() => {
    try { peak = Math.max(peak, procStatusMb(child.pid!, 'VmRSS')); } catch { /* not started yet or gone */ }
  }, 10);
  const started = performance.now();
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${label}: no listen:\n${out}`)), 120_000);
    child.stdout!.on('data', () => {
      const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (match) { clearTimeout(timer); resolve(match[1]!); }
    });
    child.once('exit', () => reject(new Error(`${label}: exited:\n${out}`)));
  });
  // From here the log is drained, not kept: minutes of request lines would grow this process, not the server.
  for (const stream of [child.stdout!, child.stderr!]) {
    stream.removeAllListeners('data');
    stream.resume();
  }
  const startSeconds = (performance.now() - started) / 1000;
  const atListen = procStatusMb(child.pid!, 'VmRSS');
  await fetch(`${url}/api/health`);
  // Idle: timers settled, and the server's idle check (src/idle-memory.ts: every 15 s with no request)
  // has had two chances to give memory back, as a server left alone does.
  await new Promise((r) => setTimeout(r, 35_000));
  clearInterval(sampler);
  const result: Record<string, unknown> = {
    start_seconds: Number(startSeconds.toFixed(2)), rss_at_listen_mb: Math.round(atListen), rss_idle_mb: Math.round(procStatusMb(child.pid!, 'VmRSS')),
    peak_rss_mb: Math.round(Math.max(peak, procStatusMb(child.pid!, 'VmHWM'))),
  };
  if (afterLoad) {
    const rss = () => Math.round(procStatusMb(child.pid!, 'VmRSS'));
    const during: number[] = [];
    const duringSampler = setInterval(() => during.push(rss()), 10_000);
    const loaded = await load(`${label}: list load`, `${url}/api/calls?limit=50`, afterLoad.headers, { connections: 50, duration: LOAD_SECONDS });
    clearInterval(duringSampler);
    const atEnd = rss();
    const idle: Array<[number, number]> = [];
    for (let t = 10; t <= IDLE_SECONDS; t += 10) {
      await new Promise((r) => setTimeout(r, 10_000));
      idle.push([t, rss()]);
    }
    result.after_load = {
      load: { seconds: LOAD_SECONDS, connections: 50, requests_per_second: loaded.requests_per_second, non_2xx: loaded.non_2xx, errors: loaded.errors },
      rss_peak_under_load_mb: Math.max(...during, atEnd),
      rss_at_end_of_load_mb: atEnd,
      rss_idle_after_load_mb: idle.map(([seconds, mb]) => ({ seconds, mb })),
      rss_after_idle_mb: idle.at(-1)?.[1] ?? atEnd,
      target_mb: 200,
    };
  }
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  return result;
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sbmem-'));
try {
  const url = await benchDatabase('calls_10k');
  const seeded = await seededCalls({ url, perOrg: 100 });
  await seeded.database.close();
  const result = {
    ...machine(),
    node_arguments: nodeArgs.slice(0, -1),
    postgres: await measure('postgres', { DATABASE_URL: url, DATA_DIR: path.join(dataDir, 'pg'), BOOTSTRAP: 'false', RATE_LIMIT_PER_MINUTE: '100000000' }, [], { headers: seeded.headers }),
    embedded_first_start: await measure('embedded', { DATABASE_URL: '', DATA_DIR: path.join(dataDir, 'embedded') }),
    embedded_restart: await measure('embedded again', { DATABASE_URL: '', DATA_DIR: path.join(dataDir, 'embedded') }),
    // The young generation V8 grows while the server starts stays committed: capping it trades
    // throughput under load (about 8% on the calls list) for idle memory.
    postgres_semi_space_8mb: await measure('postgres, --max-semi-space-size=8', { DATABASE_URL: url, DATA_DIR: path.join(dataDir, 'pg2'), BOOTSTRAP: 'false', MALLOC_ARENA_MAX: '2' }, ['--max-semi-space-size=8']),
    embedded_semi_space_8mb: await measure('embedded, --max-semi-space-size=8', { DATABASE_URL: '', DATA_DIR: path.join(dataDir, 'embedded2'), MALLOC_ARENA_MAX: '2' }, ['--max-semi-space-size=8']),
    targets: { postgres_idle_mb: 150, embedded_idle_mb: 400, embedded_first_start_peak_mb: 600 },
    load_after: loadAverage(),
  };
  console.log(JSON.stringify(result, null, 2));
  console.log(`written to ${writeResult('memory', result)}`);
} finally {
  fs.rmSync(dataDir, { recursive: true, force: true });
}
