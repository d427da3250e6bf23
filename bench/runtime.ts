/**
 * The voice runtime under concurrent calls (issue 30, item 9; targets: the runtime's own overhead
 * p99 < 30 ms at 50 concurrent calls, 100 concurrent calls without an audio gap).
 *
 * Four processes, so that each one's CPU and timing are its own:
 *  - the runtime (`startRuntimeServer` on 127.0.0.1, the real stream route, engine and adapters),
 *    reporting its `process.cpuUsage()` and RSS;
 *  - the speech stand-in (runtime/test/standins), Deepgram with its final 150 ms after its endpoint or
 *    a Finalize, and a stand-in of the platform API (`GET /api/runtime/calls/{sid}`,
 *    `PATCH /api/calls/{sid}`, tools, search, recording);
 *  - the voice stand-ins with their fixed delays, an OpenAI-compatible LLM (first token 250 ms, the
 *    answer streamed at once) and ElevenLabs (first byte 120 ms, μ-law 8 kHz), apart from Deepgram's
 *    audio work as the vendors are apart, each reporting how late its first chunks actually left;
 *  - this process: the carrier clients, one per call, playing Media Streams in real time (20 ms
 *    μ-law frames of eSpeak NG speech, then line silence), echoing each mark when the audio before
 *    it has played, and timing every outbound media frame against a real-time playout.
 *
 * Each call: the greeting, then three caller turns (distinct phrases), each answered in two
 * sentences; then the carrier's `stop`. Levels 1, 25, 50 and 100 concurrent calls, BENCH_ROUNDS
 * rounds (default 3); medians over rounds. Results: bench/results/runtime.json.
 *
 * Overhead per agent turn: the engine's `total_ms` runs from the moment it decides the caller's turn
 * is over to the first agent audio frame handed to the transport (runtime/README.md, "Latency").
 * Inside that window are the LLM's 250 ms and the TTS's 120 ms; the STT's 150 ms is inside it only
 * when the turn was ended by the VAD's silence window and the final text had to be asked for
 * (Finalize: `stt_ms` ≥ 150); when the STT's own endpoint ended the turn, its final text was already
 * there (`stt_ms` ≈ 0) and its 150 ms lie before the window. overhead = total_ms − 250 − 120 −
 * (150 when stt_ms ≥ 150). `total_ms − 520` (the three delays regardless) is recorded too.
 *
 * BENCH_RUNTIME_OWN_CORE=1: the runtime process is pinned to CPU 0 and every other process of the
 * bench (the carrier clients, the stand-ins) to CPU 1 (taskset), as in production, where the callers
 * and the vendors are other machines: the runtime then waits for no core the simulated world needs.
 *
 * Audio gaps: the carrier client keeps a playout clock (audio plays in real time from the first
 * frame of an agent utterance; the runtime keeps up to 1 s ahead). A frame that arrives after the
 * audio before it has finished playing, inside an agent turn, left the caller in silence: counted
 * when that silence exceeds 40 ms.
 */
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import WebSocket from 'ws';
import { askChild, loadAverage, machine, writeResult } from './lib.ts';

const mode = process.argv[3] ?? process.argv[2] ?? 'main'; // run directly, or as `npm run bench -- runtime`
const KEY = 'bench-key';
const DELAYS = { stt_final_ms: 150, llm_first_token_ms: 250, tts_first_byte_ms: 120 };
const GREETING = 'Hello, this is Acme. How can I help you today?';
const PHRASES = ['What time do you open on Saturday?', 'Can I book a table for four people?', 'Do you have parking near the restaurant?'];
const ANSWER = 'We are open from nine in the morning until six in the evening on most days. Is there anything else I can help you with today?';
const TURNS = PHRASES.length;
const PHASES = process.env.BENCH_RUNTIME_ALIGNED === '1' ? 1 : 10;


/** The runtime alone, as `switchboard runtime` runs it; answers stats requests over IPC. */
async function serveRuntime() {
  const { startRuntimeServer } = await import('../runtime/src/server.ts');
  const say = (level: string) => (object: object, message?: string) => console.error(`runtime ${level}: ${message ?? ''}`, object);
  const silent = process.env.BENCH_VERBOSE ? { info() {}, warn: say('warn'), error: say('error') } : { info() {}, warn() {}, error() {} };
  const server = await startRuntimeServer({ port: 0, host: '127.0.0.1', apiBaseUrl: process.env.BENCH_API_URL!, logger: silent, drainSeconds: 0 });
  let peakRss = process.memoryUsage.rss();
  // How long its event loop kept work waiting (a turn's provider answer arriving while it is busy waits as long).
  const loopDelay = monitorEventLoopDelay({ resolution: 5 });
  loopDelay.enable();
  setInterval(() => { peakRss = Math.max(peakRss, process.memoryUsage.rss()); }, 100).unref();
  process.on('message', (message: { type: string }) => {
    if (message.type === 'exit') {
      process.send!({ type: 'exiting' });
      setTimeout(() => process.exit(0), 100);
      return;
    }
    if (message.type === 'gc') (globalThis as { gc?: () => void }).gc?.();
    if (message.type === 'reset-peak') {
      peakRss = process.memoryUsage.rss();
      loopDelay.reset();
    }
    const cpu = process.cpuUsage();
    process.send!({
      type: 'stats', cpuMs: (cpu.user + cpu.system) / 1000, rss: process.memoryUsage.rss(), peakRss, active: server.calls.active,
      loopDelayMs: { p50: loopDelay.percentile(50) / 1e6, p99: loopDelay.percentile(99) / 1e6, max: loopDelay.max / 1e6 },
    });
  });
  process.send!({ type: 'ready', url: server.url });
}

/**
 * The LLM and TTS stand-ins, in a process of their own: as the vendors are, apart from the STT, whose
 * stand-in decodes and endpoints every call's audio (50 calls: 2,500 frames a second), so that work
 * cannot make their fixed delays fire late. Each reports how late its first chunks were.
 */
async function serveVoice() {
  const { OpenAiStandin } = await import('../runtime/test/standins/openai.ts');
  const { ElevenLabsStandin } = await import('../runtime/test/standins/tts.ts');
  const { synthesizeSpeech } = await import('../runtime/src/audio/synthesize.ts');
  const { SentenceSplitter } = await import('../runtime/src/engine/text.ts');
  const llm = await new OpenAiStandin({ key: KEY, firstTokenMs: DELAYS.llm_first_token_ms, gapMs: 0 }).start();
  const tts = await new ElevenLabsStandin({ key: KEY, firstByteMs: DELAYS.tts_first_byte_ms, chunkMs: 100 }).start();
  // eSpeak runs synchronously: every sentence is spoken once before the calls, then served from memory.
  const splitter = new SentenceSplitter();
  for (const sentence of [...splitter.push(`${GREETING} ${ANSWER}`), ...splitter.end()]) await synthesizeSpeech(sentence, 8000);
  const refill = () => {
    // Answers are taken by whichever call asks next: all calls answer alike.
    if (llm.script.turns.length < 1000) llm.script.push(...Array.from({ length: 2000 }, () => ({ text: ANSWER })));
    llm.requests.length = 0; tts.requests.length = 0; tts.served.length = 0;
    llm.firstChunkLateMs.length = 0; tts.firstChunkLateMs.length = 0;
  };
  refill();
  process.on('message', (message: { type: string }) => {
    if (message.type === 'refill') { refill(); process.send!({ type: 'refilled' }); }
    if (message.type === 'lateness') process.send!({ type: 'lateness', llm: [...llm.firstChunkLateMs], tts: [...tts.firstChunkLateMs] });
  });
  process.send!({ type: 'ready', url: llm.url, tts: tts.url });
}

/** The STT's stand-in and the platform API's, in one process apart from the runtime, the voice stand-ins and the callers. */
async function serveStandins() {
  const { DeepgramStandin } = await import('../runtime/test/standins/stt.ts');
  const stt = await new DeepgramStandin({ key: KEY, sttFinalMs: DELAYS.stt_final_ms }).start();
  const llm = { url: process.env.BENCH_LLM_URL! };
  const tts = { url: process.env.BENCH_TTS_URL! };
  const refill = () => {
    // Phrases are taken by whichever call asks next: all calls ask alike.
    if (stt.phrases.peek() === '') for (let i = 0; i < 2000; i++) stt.phrases.say(PHRASES[i % PHRASES.length]!);
    stt.requests.length = 0; stt.sessions.length = 0;
  };
  refill();
  const config = (sid: string) => ({
    call: { call_sid: sid, agent_id: 'agent_bench000001', call_type: 'inbound', recording_enabled: false },
    agent: {
      agent_id: 'agent_bench000001', agent_version: 1, system_prompt: 'You are the host of {{place}}.', first_message: GREETING,
      language: 'en', temperature: 0.5, voice_id: 'voice-bench', max_call_duration_seconds: 600, silence_timeout_seconds: 60,
      recording_enabled: false, interruptible: true, end_call_enabled: true, transfer_number: null, documentation_ids: [],
    },
    variables: { place: 'Acme' },
    providers: {
      stt: { provider: 'deepgram', model: 'nova-2', credentials: { api_key: KEY, base_url: stt.url } },
      tts: { provider: 'elevenlabs', model: 'eleven_flash_v2_5', voice_id: 'voice-bench', credentials: { api_key: KEY, base_url: tts.url } },
      llm: { provider: 'openai', model: 'gpt-bench', credentials: { api_key: KEY, base_url: llm.url } },
    },
    tools: [],
  });
  const api = createServer((request: IncomingMessage, response: ServerResponse) => {
    const parts: Buffer[] = [];
    request.on('data', (part: Buffer) => parts.push(part));
    request.on('end', () => {
      const send = (status: number, body: unknown) => { response.writeHead(status, { 'content-type': 'application/json' }); response.end(JSON.stringify(body)); };
      const url = request.url ?? '';
      if (!String(request.headers.authorization).startsWith('Bearer ')) return send(401, { detail: 'token required', code: 'unauthorized' });
      let match = /^\/api\/runtime\/calls\/([^/]+)$/.exec(url);
      if (match && request.method === 'GET') return send(200, { success: true, data: config(decodeURIComponent(match[1]!)) });
      match = /^\/api\/runtime\/calls\/([^/]+)\/tools\/([^/]+)$/.exec(url);
      if (match && request.method === 'POST') return send(200, { success: true, data: { status: 200, body: { ok: true }, duration_ms: 5 } });
      if (url === '/api/knowledge-base/search' && request.method === 'POST') return send(200, { success: true, data: [] });
      match = /^\/api\/calls\/([^/]+)\/recording$/.exec(url);
      if (match && request.method === 'PUT') return send(200, { success: true, data: {} });
      match = /^\/api\/calls\/([^/]+)$/.exec(url);
      if (match && request.method === 'PATCH') {
        const report = JSON.parse(Buffer.concat(parts).toString('utf8') || '{}');
        if (report.status === 'completed' || report.status === 'failed') process.send!({ type: 'final', callSid: decodeURIComponent(match[1]!), report });
        return send(200, { success: true, data: { call_sid: match[1] } });
      }
      send(404, { detail: 'Not found', code: 'not_found' });
    });
  });
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
  process.on('message', (message: { type: string }) => {
    if (message.type === 'refill') { refill(); process.send!({ type: 'refilled' }); }
  });
  process.send!({ type: 'ready', url: `http://127.0.0.1:${(api.address() as AddressInfo).port}` });
}

interface Child { child: ChildProcess; url: string; ready: Record<string, string>; request<T>(message: object, reply: string): Promise<T> }

async function start(which: string, env: Record<string, string>, execArgv: string[] = []): Promise<Child> {
  const child = fork(import.meta.filename, ['runtime', which], { env: { ...process.env, ...env }, execArgv: [...process.execArgv, ...execArgv], stdio: 'inherit' });
  const ready = await new Promise<Record<string, string>>((resolve, reject) => {
    child.once('message', (m: { url?: string }) => (m.url ? resolve(m as Record<string, string>) : reject(new Error('no url'))));
    child.once('exit', (code) => reject(new Error(`${which} exited with ${code}`)));
  });
  return { child, url: ready.url!, ready, request: <T>(message: object, reply: string) => askChild<T>(child, message, reply) };
}

/** One carrier call: Media Streams in real time, marks echoed when played, outbound frames timed. */
class CarrierCall {
  readonly sid: string;
  readonly socket: WebSocket;
  readonly gapsMs: number[] = [];
  agentFrames = 0;
  /** Its slot in the shared clock's 20 ms (see PHASES). */
  phase = 0;
  #outgoing: string[] = [];
  #playhead = 0;
  #lastAgentFrameAt = 0;
  #inAgentTurn = false;
  #pendingMarks = 0;
  #streamSid: string;
  #opened: Promise<void>;
  readonly silence: string;

  constructor(runtimeUrl: string, sid: string, silence: string) {
    this.sid = sid;
    this.silence = silence;
    this.#streamSid = `MZ${sid}`;
    this.socket = new WebSocket(`${runtimeUrl.replace('http', 'ws')}/api/runtime/carrier_a/stream`);
    this.#opened = new Promise((resolve, reject) => { this.socket.once('open', () => resolve()); this.socket.once('error', reject); });
    this.socket.on('message', (data) => this.#received(JSON.parse(data.toString())));
  }

  async begin() {
    await this.#opened;
    const token = `h.${Buffer.from(JSON.stringify({ sub: this.sid, organization_id: 'org_bench0000001', scope: 'runtime' })).toString('base64url')}.s`;
    this.socket.send(JSON.stringify({ event: 'connected', protocol: 'Call', version: '1.0.0' }));
    this.socket.send(JSON.stringify({
      event: 'start', sequenceNumber: '1', streamSid: this.#streamSid,
      start: { streamSid: this.#streamSid, accountSid: 'ACbench', callSid: `CA${this.sid}`, tracks: ['inbound'], customParameters: { call_sid: this.sid, agent_id: 'agent_bench000001', token }, mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 } },
    }));
  }

  /** The next 20 ms frame (speech when queued, line silence otherwise): called by the shared clock. */
  tick() {
    const payload = this.#outgoing.shift() ?? this.silence;
    if (this.socket.readyState !== WebSocket.OPEN) return;
    this.socket.send(`{"event":"media","streamSid":"${this.#streamSid}","media":{"track":"inbound","payload":"${payload}"}}`);
  }

  /** Queues the caller's words; the agent's next audio starts a new agent turn. */
  say(frames: string[]) {
    this.#inAgentTurn = false;
    this.#outgoing.push(...frames);
  }

  get speaking() { return this.#outgoing.length > 0; }

  /** The agent has spoken since the caller last did, all of it has played, and nothing came for 700 ms. */
  agentDone(now: number) {
    if (this.socket.readyState !== WebSocket.OPEN) return true; // the runtime ended the call
    return this.#inAgentTurn && this.#pendingMarks === 0 && now > this.#playhead + 300 && now > this.#lastAgentFrameAt + 700;
  }

  stop() {
    if (this.socket.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify({ event: 'stop', streamSid: this.#streamSid, stop: { callSid: `CA${this.sid}` } }));
  }

  #received(message: { event: string; mark?: { name: string } }) {
    const now = performance.now();
    if (message.event === 'media') {
      this.agentFrames++;
      this.#lastAgentFrameAt = now;
      if (now > this.#playhead) {
        // The buffer ran dry: inside an agent turn, the caller heard silence for that long.
        if (this.#inAgentTurn && now - this.#playhead > 40) this.gapsMs.push(Math.round(now - this.#playhead));
        this.#playhead = now;
      }
      this.#playhead += 20;
      this.#inAgentTurn = true;
    } else if (message.event === 'mark') {
      this.#pendingMarks++;
      setTimeout(() => {
        this.#pendingMarks--;
        if (this.socket.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify({ event: 'mark', streamSid: this.#streamSid, mark: message.mark }));
      }, Math.max(0, this.#playhead - now));
    } else if (message.event === 'clear') this.#playhead = now;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const round1 = (value: number | null) => (value === null ? null : Math.round(value * 10) / 10);
const median = (values: number[]) => (values.length ? [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]! : null);
const percentile = (values: number[], p: number) => {
  if (!values.length) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
};

async function main() {
  const { synthesizeSpeech } = await import('../runtime/src/audio/synthesize.ts');
  const { convertBuffer } = await import('../runtime/src/audio/convert.ts');
  const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
  const LEVELS = (process.env.BENCH_RUNTIME_LEVELS ?? '1,25,50,100').split(',').map(Number);
  const info = machine();

  const frames = async (text: string) => {
    const mulaw = convertBuffer(await synthesizeSpeech(text, 8000), { encoding: 'pcm16', sampleRate: 8000 }, { encoding: 'mulaw', sampleRate: 8000 });
    const out: string[] = [];
    for (let offset = 0; offset < mulaw.length; offset += 160) {
      const frame = Buffer.alloc(160, 0xff);
      mulaw.copy(frame, 0, offset, Math.min(mulaw.length, offset + 160));
      out.push(frame.toString('base64'));
    }
    return out;
  };
  const phraseFrames = await Promise.all(PHRASES.map(frames));
  const silence = Buffer.alloc(160, 0xff).toString('base64');

  // The simulated world on CPU 1 (the stand-ins forked below inherit it), the runtime on CPU 0.
  const ownCore = process.env.BENCH_RUNTIME_OWN_CORE === '1';
  const pin = (pid: number, cpu: number) => execFileSync('taskset', ['-a', '-p', '-c', String(cpu), String(pid)], { stdio: 'ignore' });
  if (ownCore) pin(process.pid, 1);
  const voice = await start('serve-voice', {});
  const standins = await start('serve-standins', { BENCH_LLM_URL: voice.url, BENCH_TTS_URL: voice.ready.tts! });
  // BENCH_CPU_PROF=dir: the runtime process writes a V8 CPU profile there when it exits (its hot path).
  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  const runtime = await start('serve-runtime', { BENCH_API_URL: standins.url }, ['--expose-gc', ...profile]);
  if (ownCore) pin(runtime.child.pid!, 0);
  type Stats = { cpuMs: number; rss: number; peakRss: number; active: number; loopDelayMs: { p50: number; p99: number; max: number } };
  type Report = { status: string; end_reason: string; duration_seconds: number; transcript: Array<{ role: string; latency?: { stt_ms: number; llm_first_token_ms: number; tts_first_byte_ms: number; total_ms: number } }> };
  const finals = new Map<string, (report: Report) => void>();
  standins.child.on('message', (m: { type: string; callSid?: string; report?: Report }) => {
    if (m.type === 'final') finals.get(m.callSid!)?.(m.report!);
  });

  let callCounter = 0;
  /** `count` calls at once (starts spread over 2 s, as calls arrive), each through its whole script. */
  async function level(count: number) {
    await standins.request({ type: 'refill' }, 'refilled');
    await voice.request({ type: 'refill' }, 'refilled');
    await runtime.request({ type: 'gc' }, 'stats');
    await sleep(500);
    const idle = await runtime.request<Stats>({ type: 'reset-peak' }, 'stats');
    const calls: CarrierCall[] = [];
    const reports: Promise<Report>[] = [];
    // One clock for every caller, without drift: each call sends a frame every 20 ms, on a phase of its
    // own (PHASES slots 20 / PHASES ms apart, call i in slot i % PHASES), as a carrier's independent
    // calls do; BENCH_RUNTIME_ALIGNED=1 sends every call's frame at the same instant instead.
    let next = performance.now();
    let slot = 0;
    let clockRunning = true;
    const clock = async () => {
      while (clockRunning) {
        const late = performance.now() - next;
        if (late >= 0) {
          for (const call of calls) if (call.phase === slot) call.tick();
          slot = (slot + 1) % PHASES;
          next += 20 / PHASES;
          if (late > 200) next = performance.now(); // a stall of the load generator: do not burst
        } else await sleep(Math.max(1, -late));
      }
    };
    const clockDone = clock();
    const script = async (index: number) => {
      await sleep((index / Math.max(1, count)) * 2000);
      const sid = `call_bench${String(++callCounter).padStart(8, '0')}`;
      const call = new CarrierCall(runtime.url, sid, silence);
      call.phase = index % PHASES;
      reports.push(new Promise<Report>((resolve) => finals.set(sid, resolve)));
      await call.begin();
      calls.push(call);
      const waitAgent = async () => {
        const deadline = performance.now() + 30_000;
        while (!call.agentDone(performance.now()) && performance.now() < deadline) await sleep(50);
      };
      await waitAgent(); // the greeting
      if (process.env.BENCH_VERBOSE) console.log(sid, 'greeted', call.agentFrames);
      for (let turn = 0; turn < TURNS; turn++) {
        await sleep(300);
        call.say(phraseFrames[(turn + index) % PHRASES.length]!);
        while (call.speaking) await sleep(20);
        await waitAgent();
      }
      call.stop();
      return call;
    };
    const startedAt = performance.now();
    const done = await Promise.all(Array.from({ length: count }, (_, i) => script(i)));
    const finished = await Promise.race([Promise.all(reports), sleep(30_000).then(() => null)]);
    clockRunning = false;
    await clockDone;
    const stats = await runtime.request<Stats>({ type: 'stats' }, 'stats');
    const late = await voice.request<{ llm: number[]; tts: number[] }>({ type: 'lateness' }, 'lateness');
    for (const call of done) call.socket.close();
    const reported = finished ?? (await Promise.all(reports.map((report) => Promise.race([report, sleep(0).then(() => null)])))).filter((r): r is Report => r !== null);
    if (reported.length < count) console.error(`level ${count}: ${count - reported.length} calls did not report their end within 30 s of the stop`);
    const turnLatencies = reported.flatMap((report) => report.transcript.filter((turn) => turn.role === 'agent' && turn.latency).map((turn) => turn.latency!));
    const fixedInside = (l: { stt_ms: number }) => DELAYS.llm_first_token_ms + DELAYS.tts_first_byte_ms + (l.stt_ms >= DELAYS.stt_final_ms ? DELAYS.stt_final_ms : 0);
    const overhead = turnLatencies.map((l) => l.total_ms - fixedInside(l));
    const overheadAllDelays = turnLatencies.map((l) => l.total_ms - (DELAYS.stt_final_ms + DELAYS.llm_first_token_ms + DELAYS.tts_first_byte_ms));
    const engineOnly = turnLatencies.map((l) => l.total_ms - l.stt_ms - l.llm_first_token_ms - l.tts_first_byte_ms);
    const callSeconds = reported.reduce((sum, report) => sum + report.duration_seconds, 0);
    const gaps = done.flatMap((call) => call.gapsMs);
    return {
      calls: count,
      completed: reported.filter((r) => r.status === 'completed' && r.end_reason === 'user_hangup').length,
      end_reasons: Object.fromEntries([...new Set(reported.map((r) => r.end_reason))].map((reason) => [reason, reported.filter((r) => r.end_reason === reason).length])),
      agent_turns: turnLatencies.length,
      expected_agent_turns: count * TURNS,
      wall_seconds: Number(((performance.now() - startedAt) / 1000).toFixed(1)),
      overhead_ms: { p50: percentile(overhead, 50), p99: percentile(overhead, 99), max: Math.max(...overhead) },
      total_minus_520_ms: { p50: percentile(overheadAllDelays, 50), p99: percentile(overheadAllDelays, 99) },
      total_ms: { p50: percentile(turnLatencies.map((l) => l.total_ms), 50), p99: percentile(turnLatencies.map((l) => l.total_ms), 99) },
      // What is left once the measured provider waits (request to final text, first token, first byte: the stand-ins' delays plus the HTTP and WebSocket round trips to them) are taken out: the engine's own time.
      engine_only_ms: { p50: percentile(engineOnly, 50), p99: percentile(engineOnly, 99) },
      // The slowest turns' breakdown: which wait made them slow.
      slowest_turns: [...turnLatencies].sort((a, b) => b.total_ms - a.total_ms).slice(0, 3),
      turns_ended_by_stt_endpoint: turnLatencies.filter((l) => l.stt_ms < DELAYS.stt_final_ms).length,
      // How late the stand-ins' own first chunks left them (their process's clock, from the request's arrival): part of the overhead above that is not the runtime's.
      standin_first_chunk_late_ms: {
        llm: { p50: round1(percentile(late.llm, 50)), p99: round1(percentile(late.llm, 99)) },
        tts: { p50: round1(percentile(late.tts, 50)), p99: round1(percentile(late.tts, 99)) },
      },
      llm_first_token_ms_p50: percentile(turnLatencies.map((l) => l.llm_first_token_ms), 50),
      tts_first_byte_ms_p50: percentile(turnLatencies.map((l) => l.tts_first_byte_ms), 50),
      audio_gaps_over_40ms: gaps.length,
      longest_gap_ms: gaps.length ? Math.max(...gaps) : 0,
      outbound_frames: done.reduce((sum, call) => sum + call.agentFrames, 0),
      call_seconds: Number(callSeconds.toFixed(1)),
      cpu_ms_per_call_second: Number(((stats.cpuMs - idle.cpuMs) / callSeconds).toFixed(2)),
      runtime_event_loop_delay_ms: { p50: round1(stats.loopDelayMs.p50), p99: round1(stats.loopDelayMs.p99), max: round1(stats.loopDelayMs.max) },
      rss_idle_mb: Number((idle.rss / 1e6).toFixed(1)),
      rss_peak_mb: Number((stats.peakRss / 1e6).toFixed(1)),
      rss_per_call_mb: Number(((stats.peakRss - idle.rss) / 1e6 / count).toFixed(2)),
    };
  }

  const rounds: Awaited<ReturnType<typeof level>>[][] = [];
  try {
    if (process.env.BENCH_VERBOSE) console.log('processes ready');
    await level(2); // warm-up: JIT, the WASM modules, connections
    for (let round = 1; round <= ROUNDS; round++) {
      const results = [];
      for (const count of LEVELS) {
        const result = await level(count);
        if (process.env.BENCH_VERBOSE) console.log(JSON.stringify(result));
        console.log(`round ${round} ${count} calls: overhead p50 ${result.overhead_ms.p50} p99 ${result.overhead_ms.p99} ms, gaps ${result.audio_gaps_over_40ms}, ${result.cpu_ms_per_call_second} CPU ms/call-s, ${result.rss_per_call_mb} MB/call, load ${loadAverage().join(' ')}`);
        results.push(result);
      }
      rounds.push(results);
    }
  } finally {
    if (profile.length) {
      const exited = new Promise((resolve) => runtime.child.once('exit', resolve));
      runtime.child.send({ type: 'exit' });
      await exited;
    } else runtime.child.kill('SIGKILL');
    standins.child.kill('SIGKILL');
    voice.child.kill('SIGKILL');
  }
  const summary = LEVELS.map((count, i) => {
    const of = (pick: (r: (typeof rounds)[0][0]) => number | null) => median(rounds.map((r) => pick(r[i]!)).filter((v): v is number => v !== null));
    return {
      calls: count,
      overhead_p50_ms: of((r) => r.overhead_ms.p50),
      overhead_p99_ms: of((r) => r.overhead_ms.p99),
      total_minus_520_p99_ms: of((r) => r.total_minus_520_ms.p99),
      engine_only_p99_ms: of((r) => r.engine_only_ms.p99),
      runtime_event_loop_delay_p99_ms: of((r) => r.runtime_event_loop_delay_ms.p99),
      standin_llm_first_chunk_late_p99_ms: of((r) => r.standin_first_chunk_late_ms.llm.p99),
      standin_tts_first_chunk_late_p99_ms: of((r) => r.standin_first_chunk_late_ms.tts.p99),
      audio_gaps_over_40ms: of((r) => r.audio_gaps_over_40ms),
      audio_gaps_over_40ms_all_rounds: rounds.reduce((sum, r) => sum + r[i]!.audio_gaps_over_40ms, 0),
      cpu_ms_per_call_second: of((r) => r.cpu_ms_per_call_second),
      rss_per_call_mb: of((r) => r.rss_per_call_mb),
      completed_all_rounds: rounds.every((r) => r[i]!.completed === count && r[i]!.agent_turns === r[i]!.expected_agent_turns),
    };
  });
  const at = (calls: number) => summary.find((s) => s.calls === calls);
  const result = {
    ...info, load_after: loadAverage(),
    note: 'a 2-core machine shared with other engineers\' builds and tests while this ran: see the load averages; CPU per call-second is the runtime process\'s own (process.cpuUsage), the least sensitive to the sharing',
    rounds: ROUNDS, turns_per_call: TURNS, delays: DELAYS, frame_phases: PHASES,
    runtime_on_its_own_core: ownCore,
    overhead_definition: 'total_ms (the engine decides the caller\'s turn is over → first agent audio frame handed to the transport) − 250 (LLM) − 120 (TTS) − 150 when the STT\'s final was asked for inside the window (stt_ms ≥ 150); total_minus_520 subtracts all three regardless',
    gap_definition: 'outbound media frames that reached the carrier client more than 40 ms after the audio before them had finished playing (real-time playout from the utterance\'s first frame, the runtime keeping up to 1 s ahead), inside an agent turn',
    targets: {
      overhead_p99_under_30ms_at_50: at(50) ? (at(50)!.overhead_p99_ms ?? Infinity) < 30 : null,
      no_audio_gap_at_100: at(100) ? at(100)!.audio_gaps_over_40ms_all_rounds === 0 : null,
    },
    summary,
    per_round: rounds,
  };
  console.log(JSON.stringify({ summary, targets: result.targets }, null, 1));
  console.log(`written to ${writeResult(ownCore ? 'runtime-own-core' : 'runtime', result)}`);
  process.exit(0);
}

// Last: the functions above use constants declared further down the file.
// A child whose bench is gone (killed, crashed) goes too, rather than holding a port and a core.
if (mode.startsWith('serve-')) process.on('disconnect', () => process.exit(0));
if (mode === 'serve-runtime') await serveRuntime();
else if (mode === 'serve-standins') await serveStandins();
else if (mode === 'serve-voice') await serveVoice();
else await main();
