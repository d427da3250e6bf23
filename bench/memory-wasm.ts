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
 * One more start with V8's per-function compilation trace names the functions whose optimizing
 * compile took the most memory (their index mapped to PGlite's export of that name).
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
  // Turboshaft's own passes for WebAssembly, each switched off: the peak is in the first of them.
  'no Turboshaft loop unrolling': ['--no-turboshaft-loop-unrolling'],
  'no Turboshaft load elimination': ['--no-turboshaft-wasm-load-elimination'],
  'no WebAssembly optimization passes': ['--no-wasm-opt'],
  'baseline compiler only': ['--no-wasm-tier-up', '--no-wasm-dynamic-tiering'],
};

async function firstStart(flags: string[], keepOutput = 100_000) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sbwasm-'));
  const child = spawn(process.execPath, [...flags, ...nodeArgs], {
    cwd: PROJECT_ROOT, env: { ...process.env, DATABASE_URL: '', LOG_LEVEL: 'info', HOST: '127.0.0.1', PORT: '0', DATA_DIR: dataDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const collect = (d: Buffer) => { if (out.length < keepOutput) out += d; };
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
      output: out,
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

/** The exported name of each function index in `indices`, read from the module's export section. */
function exportedNames(wasm: Buffer, indices: Set<number>): Map<number, string> {
  let at = 8;
  const u32 = () => { let value = 0; let shift = 0; let byte; do { byte = wasm[at++]!; value |= (byte & 0x7f) << shift; shift += 7; } while (byte & 0x80); return value >>> 0; };
  const names = new Map<number, string>();
  while (at < wasm.length) {
    const id = wasm[at++];
    const end = u32() + at;
    if (id === 7) {
      for (let n = u32(); n > 0; n--) {
        const length = u32();
        const name = wasm.subarray(at, at + length).toString();
        at += length;
        const kind = wasm[at++];
        const index = u32();
        if (kind === 0 && indices.has(index)) names.set(index, name);
      }
    }
    at = end;
  }
  return names;
}

/** One more first start with V8's per-function compilation trace: the optimizing compiles that took the most memory. */
async function largestCompiles(count = 3) {
  const { output, peak_rss_mb } = await firstStart(['--trace-wasm-compilation-times'], 50_000_000);
  const compiles = [...output.matchAll(/#(\d+) using TurboFan, took (\d+) ms and (\d+) \/ \d+ max\/total bytes; bodysize (\d+)/g)]
    .map((m) => ({ function_index: Number(m[1]), compile_ms: Number(m[2]), compiler_memory_mb: Math.round(Number(m[3]) / 2 ** 20), body_bytes: Number(m[4]) }))
    .sort((a, b) => b.compiler_memory_mb - a.compiler_memory_mb).slice(0, count);
  const wasm = fs.readFileSync(path.join(PROJECT_ROOT, 'node_modules/@electric-sql/pglite/dist/pglite.wasm'));
  const names = exportedNames(wasm, new Set(compiles.map((c) => c.function_index)));
  return { peak_rss_mb, compiles: compiles.map((c) => ({ ...c, pglite_function: names.get(c.function_index) ?? null })) };
}

const before = machine();
const rounds: Record<string, Array<Omit<Awaited<ReturnType<typeof firstStart>>, 'output'>>> = {};
for (let r = 0; r < ROUNDS; r++) {
  for (const [name, flags] of Object.entries(VARIANTS)) {
    const { output: _, ...result } = await firstStart(flags);
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
const compiles = await largestCompiles();
console.log(JSON.stringify(compiles));
const out = { ...before, load_after: loadAverage(), what: 'embedded first start (new DATA_DIR), server process RSS', rounds: ROUNDS, target_peak_mb: 600, variants, largest_optimizing_compiles: compiles };
console.log(JSON.stringify(Object.fromEntries(Object.entries(variants).map(([k, v]) => [k, [v.peak_rss_mb_median, v.idle_rss_mb_median]]))));
console.log(`written to ${writeResult('memory-wasm', out)}`);
