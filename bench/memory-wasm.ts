/**
 * Where the embedded database's first-start peak comes from, and what V8's WebAssembly settings do
 * to it (issue 33: first-start peak < 600 MB, or the alternatives tried with their figures).
 *
 * The server is started as `npm start` runs it, on a new DATA_DIR, with each set of V8 flags in
 * turn (BENCH_ROUNDS rounds, interleaved); its RSS is read from /proc every 10 ms until 20 s after
 * its first request. Reported per variant: the median over rounds of the peak (VmHWM), the RSS
 * once idle, the seconds to listen, and one round's RSS timeline (the highest reading in each
 * second), which shows the peak as a climb while PGlite runs the migrations and a fall when it
 * ends: memory V8's optimizing compiler takes to compile PGlite's WebAssembly and then frees.
 * Results: bench/results/memory-wasm.json.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadAverage, machine, median, npmStartArguments, procStatusMb, PROJECT_ROOT, writeResult } from './lib.ts';

const nodeArgs = npmStartArguments();
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const VARIANTS: Record<string, string[]> = {
  default: [],
  'one compilation task': ['--wasm-num-compilation-tasks=1'],
  'no inlining': ['--no-wasm-inlining'],
  'no loop unrolling or peeling': ['--no-wasm-inlining', '--no-wasm-loop-unrolling', '--no-wasm-loop-peeling'],
  'baseline compiler only': ['--no-wasm-tier-up', '--no-wasm-dynamic-tiering'],
};

async function firstStart(flags: string[]) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sbwasm-'));
  const child = spawn(process.execPath, [...flags, ...nodeArgs], {
    cwd: PROJECT_ROOT, env: { ...process.env, DATABASE_URL: '', LOG_LEVEL: 'info', HOST: '127.0.0.1', PORT: '0', DATA_DIR: dataDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const collect = (d: Buffer) => { if (out.length < 100_000) out += d; };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const started = performance.now();
  const perSecond: number[] = [];
  const sampler = setInterval(() => {
    try {
      const second = Math.floor((performance.now() - started) / 1000);
      perSecond[second] = Math.max(perSecond[second] ?? 0, Math.round(procStatusMb(child.pid!, 'VmRSS')));
    } catch { /* not started yet */ }
  }, 10);
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setInterval(() => {
        const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
        if (match) { clearInterval(timer); resolve(match[1]!); }
      }, 20);
      child.once('exit', () => { clearInterval(timer); reject(new Error(`exited before listening:\n${out}`)); });
    });
    const listenSeconds = (performance.now() - started) / 1000;
    await fetch(`${url}/api/health`);
    await new Promise((r) => setTimeout(r, 20_000));
    return {
      listen_seconds: Number(listenSeconds.toFixed(1)), peak_rss_mb: Math.round(procStatusMb(child.pid!, 'VmHWM')),
      idle_rss_mb: Math.round(procStatusMb(child.pid!, 'VmRSS')), rss_by_second_mb: perSecond.map((v) => v ?? null),
    };
  } finally {
    clearInterval(sampler);
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

const before = machine();
const rounds: Record<string, Array<Awaited<ReturnType<typeof firstStart>>>> = {};
for (let r = 0; r < ROUNDS; r++) {
  for (const [name, flags] of Object.entries(VARIANTS)) {
    const result = await firstStart(flags);
    (rounds[name] ??= []).push(result);
    console.log(`round ${r + 1} ${name}: peak ${result.peak_rss_mb} MB, idle ${result.idle_rss_mb} MB, listening after ${result.listen_seconds} s`);
  }
}
const variants = Object.fromEntries(Object.entries(rounds).map(([name, results]) => [name, {
  v8_flags: VARIANTS[name],
  peak_rss_mb_median: median(results.map((r) => r.peak_rss_mb)),
  idle_rss_mb_median: median(results.map((r) => r.idle_rss_mb)),
  listen_seconds_median: median(results.map((r) => r.listen_seconds)),
  peaks_mb: results.map((r) => r.peak_rss_mb),
  rss_by_second_mb_first_round: results[0]!.rss_by_second_mb,
}]));
const out = { ...before, load_after: loadAverage(), what: 'embedded first start (new DATA_DIR), server process RSS', rounds: ROUNDS, target_peak_mb: 600, variants };
console.log(JSON.stringify(Object.fromEntries(Object.entries(variants).map(([k, v]) => [k, [v.peak_rss_mb_median, v.idle_rss_mb_median]]))));
console.log(`written to ${writeResult('memory-wasm', out)}`);
