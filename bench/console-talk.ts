/**
 * The console's "Talk to agent" timed as the page plays it (issue 31, item 8): from the end of the
 * caller's speech to the first agent audio the page's jitter buffer plays, minus the stand-ins' fixed
 * delays. Used by bench/console.ts.
 *
 * The caller is Chromium's fake microphone playing a WAV written here: 4 s of silence (the greeting),
 * then TURNS questions of eSpeak NG speech 3 s apart, then a minute of silence (Chromium loops the
 * file; each preview call opens the device afresh, so the file starts again with each run). The
 * providers are the stand-ins with bench/runtime.ts's fixed delays: Deepgram's final 150 ms after its
 * endpoint, the LLM's first token 250 ms, the TTS's first byte 120 ms.
 *
 * The two ends on one clock, the page's AudioContext:
 *  - the console marks `caller-audio-captured` (detail.contextTime: the capture worklet's first sample;
 *    sample n of the 16 kHz stream it sends was captured at that + n / 16000 s) and
 *    `agent-audio-played` each time its jitter buffer starts playing (detail.contextTime: the first
 *    sample played);
 *  - the bench wraps the page's WebSocket.send to measure each 10 ms of the PCM sent (RMS), finds each
 *    question's onset in it (the first 10 ms louder than the stand-ins' SPEECH_RMS after silence), and
 *    places the speech's end at onset + the question's length in the WAV (first to last 10 ms louder
 *    than SPEECH_RMS, computed from the synthesized PCM), or at the end found in the sent audio itself
 *    (its last loud 10 ms) when that is earlier: the earlier end makes the longer delay, so the
 *    browser's gain control or noise suppression softening an onset cannot flatter the result. Their
 *    difference is recorded per turn; the resolution is 10 ms.
 *  - raw = the first `agent-audio-played` after that end − the end, in audio-clock ms. This is the
 *    graph processing the last speech sample to the graph rendering the first agent sample: the
 *    capture device's latency before the graph and the output device's after it (outputLatency,
 *    recorded) are outside.
 *
 * Subtracted: the silence the STT waits before it endpoints (the runtime asks Deepgram for
 * `endpointing=300`; the stand-in counts it in audio) + the final's 150 + the first token's 250 + the
 * first byte's 120 ms. A turn the runtime ended by its own VAD (stt_ms ≥ 150: the VAD's silence
 * window, then Finalize) has that window in place of the endpointing. raw − 520 is recorded too, and
 * each turn's latency as the runtime reported it, so what lies outside the runtime's own window shows.
 * The TTS stand-in synthesizes its text before its 120 ms; the texts are synthesized (cached) before the
 * runs, so eSpeak's time on this machine is not counted as the platform's. The stand-ins run in a
 * process of their own (bench/talk-standins.ts), as the vendors are apart: in this one, driving Chromium,
 * the LLM's first token reached the runtime up to 40 ms after its 250. How late their first chunks left is recorded.
 */
import { fork } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Page } from 'playwright-core';
import { encodeWav, pcm16ToSamples, rms } from '../runtime/src/index.ts';
import { DEFAULT_SEGMENTER } from '../runtime/src/engine/vad.ts';
import { SPEECH_RMS } from '../runtime/test/standins/speech-activity.ts';
import { speechPcm } from '../runtime/test/helpers/speech.ts';
import { CHROMIUM } from '../test/helpers/browser.ts';
import { askChild } from './lib.ts';

export const TALK_DELAYS = { stt_final_ms: 150, llm_first_token_ms: 250, tts_first_byte_ms: 120 };
const KEY = 'bench-standin-key';
const RATE = 16000;
const STEP = RATE / 100; // 10 ms, as the stand-in's speech activity measures
const QUESTIONS = ['What time do you open on Saturday?', 'Can I book a table for four people?', 'Do you have parking near the restaurant?', 'When do you open?'];
const ANSWERS = ['We open at nine.', 'Yes, for four at seven.', 'There is parking behind us.', 'At nine every day.'];
const LEAD_S = 4;
const GAP_S = 3;

/** First and last 10 ms step louder than SPEECH_RMS, in samples [start, end). */
function loudSpan(samples: Int16Array): { start: number; end: number } {
  let start = -1;
  let end = -1;
  for (let i = 0; i + STEP <= samples.length; i += STEP) {
    if (rms(samples.subarray(i, i + STEP)) > SPEECH_RMS) {
      if (start < 0) start = i;
      end = i + STEP;
    }
  }
  return { start, end };
}

/** Utterances in a stream measured as RMS per 10 ms: loud steps, split where silence lasts 500 ms. */
function utterances(stepRms: number[]): Array<{ onsetStep: number; endStep: number }> {
  const found: Array<{ onsetStep: number; endStep: number }> = [];
  for (let i = 0; i < stepRms.length; i++) {
    if (stepRms[i]! <= SPEECH_RMS) continue;
    const last = found.at(-1);
    if (last && i - last.endStep < 50) last.endStep = i + 1;
    else found.push({ onsetStep: i, endStep: i + 1 });
  }
  return found;
}

/** In the page before its scripts: the RMS of each 10 ms of PCM it sends, and its AudioContext. */
const TAP = `(() => {
  const steps = [];
  window.__talkSent = steps;
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (data) {
    if (data instanceof ArrayBuffer) {
      const s = new Int16Array(data);
      for (let i = 0; i + ${STEP} <= s.length; i += ${STEP}) {
        let sum = 0;
        for (let j = i; j < i + ${STEP}; j++) sum += s[j] * s[j];
        steps.push(Math.sqrt(sum / ${STEP}));
      }
    }
    return send.call(this, data);
  };
  const Context = window.AudioContext;
  window.AudioContext = class extends Context { constructor(options) { super(options); window.__talkContext = this; } };
})()`;

export interface TalkSample {
  run: number; turn: number;
  raw_ms: number; raw_page_timeline_ms: number; subtracted_ms: number; overhead_ms: number; minus_520_ms: number;
  speech_end_by_detection_offset_ms: number;
  runtime: { stt_ms: number; llm_first_token_ms: number; tts_first_byte_ms: number; total_ms: number } | null;
  outside_runtime_ms: number | null;
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]! : null;
};
const round1 = (value: number) => Math.round(value * 10) / 10;

export async function measureTalk(options: { url: string; apiKey: string; orgId: string; runs: number; turns: number }) {
  const turns = Math.min(options.turns, QUESTIONS.length);
  const questions = await Promise.all(QUESTIONS.slice(0, turns).map((text) => speechPcm(text, RATE)));
  const spans = questions.map((pcm) => loudSpan(pcm16ToSamples(pcm)));
  const silence = (seconds: number) => Buffer.alloc(RATE * 2 * seconds);
  const wav = path.join(os.tmpdir(), `sbconsole-talk-${process.pid}.wav`);
  fs.writeFileSync(wav, encodeWav({ sampleRate: RATE, channels: 1, samples: pcm16ToSamples(Buffer.concat([silence(LEAD_S), ...questions.flatMap((q) => [q, silence(GAP_S)]), silence(60)])) }));

  // The stand-ins in their own process (bench/talk-standins.ts), apart from this one's Chromium driving.
  const standins = fork(path.join(import.meta.dirname, 'talk-standins.ts'), [], {
    env: { ...process.env, TALK_DELAYS: JSON.stringify(TALK_DELAYS), TALK_KEY: KEY, TALK_TEXTS: JSON.stringify(['Hello, this is Acme.', ...ANSWERS.slice(0, turns)]) },
    stdio: 'inherit',
  });
  const ask = <T>(message: object | null, reply: string) => askChild<T>(standins, message, reply);
  const urls = await ask<{ stt: string; llm: string; tts: string }>(null, 'ready');
  const api = async (method: string, url: string, body?: object) => {
    const res = await fetch(`${options.url}${url}`, {
      method, headers: { 'x-api-key': options.apiKey, 'x-organization-id': options.orgId, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
    return ((await res.json()) as { data: any }).data;
  };
  for (const [provider, url] of [['openai', urls.llm], ['deepgram', urls.stt], ['elevenlabs', urls.tts]] as const) {
    await api('POST', '/api/integrations', { name: provider, provider, ...(provider === 'openai' ? { category: 'llm' } : {}), credentials: { api_key: KEY, base_url: url } });
  }
  const agent = await api('POST', '/api/agents', {
    agent_name: 'Talk bench', system_prompt: 'Be brief.', first_message: 'Hello, this is Acme.', stt_provider: 'deepgram', tts_provider: 'elevenlabs',
    voice_id: 'voice-standin', llm_provider: 'openai', llm_model: 'gpt-test',
  });

  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync',
      '--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream', `--use-file-for-fake-audio-capture=${wav}`, '--autoplay-policy=no-user-gesture-required'],
  });
  const credentials = JSON.stringify({ apiKey: options.apiKey, orgId: options.orgId });
  const samples: TalkSample[] = [];
  const captureGaps: number[] = [];
  const problems: string[] = [];
  let lateness: { llm: number[]; tts: number[] } = { llm: [], tts: [] };
  let audio: { sampleRate: number; baseLatency: number; outputLatency: number } | null = null;
  try {
    for (let run = 1; run <= options.runs; run++) {
      await ask({ type: 'script', questions: QUESTIONS.slice(0, turns), answers: ANSWERS.slice(0, turns) }, 'scripted');
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      await context.addInitScript(`sessionStorage.setItem('switchboard.apiKey', ${JSON.stringify(credentials)})`);
      await context.addInitScript(TAP);
      const page = await context.newPage();
      page.on('pageerror', (error) => problems.push(`run ${run}: ${error.message}`));
      try {
        samples.push(...await oneCall(page, run));
      } catch (err) {
        problems.push(`run ${run}: ${(err as Error).message.split('\n')[0]}`);
      }
      await context.close();
    }
  } finally {
    await browser.close();
    lateness = await ask<{ llm: number[]; tts: number[] }>({ type: 'lateness' }, 'lateness');
    standins.kill();
    fs.rmSync(wav, { force: true });
  }

  async function oneCall(page: Page, run: number): Promise<TalkSample[]> {
    await page.goto(`${options.url}/agents/${agent.agent_id}`);
    const panel = page.getByTestId('talk-panel');
    await panel.getByRole('button', { name: 'Talk to agent' }).click();
    await panel.getByTestId('talk-latency').nth(turns - 1).waitFor({ timeout: (LEAD_S + turns * (GAP_S + 4)) * 1000 + 20_000 });
    // The last answer has started playing once its mark is there (greeting + one per answer, at least).
    await page.waitForFunction(`performance.getEntriesByName('agent-audio-played').length >= ${turns + 1}`, undefined, { timeout: 10_000 });
    type Mark = { at: number; context: number };
    const seen = await page.evaluate(`(() => {
      const marks = (name) => performance.getEntriesByName(name).map((m) => ({ at: m.startTime, context: m.detail.contextTime }));
      const context = window.__talkContext;
      return { sent: window.__talkSent, captured: marks('caller-audio-captured'), played: marks('agent-audio-played'),
        audio: { sampleRate: context.sampleRate, baseLatency: context.baseLatency, outputLatency: context.outputLatency }, now: context.currentTime };
    })()`) as { sent: number[]; captured: Mark[]; played: Mark[]; audio: { sampleRate: number; baseLatency: number; outputLatency: number }; now: number };
    // The alignment's premise, checked: the samples sent cover the audio clock since the capture's first
    // sample, none skipped (what is left is the frame being filled and frames in flight, under 40 ms).
    const captureGapMs = round1((seen.now - seen.captured[0]!.context) * 1000 - seen.sent.length * 10);
    captureGaps.push(captureGapMs);
    audio ??= seen.audio;
    const endpointingMs = (await ask<{ value: number }>({ type: 'endpointing' }, 'endpointing')).value;
    await panel.getByRole('button', { name: 'End' }).click();
    const link = panel.getByTestId('talk-call-link');
    await link.waitFor({ timeout: 10_000 });
    const callSid = (await link.getAttribute('href'))!.split('/').pop()!;
    let call: any;
    for (let i = 0; i < 100; i++) {
      call = await api('GET', `/api/calls/${callSid}`);
      if (call.status === 'completed') break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const latencies = (call.transcript as Array<{ role: string; latency?: TalkSample['runtime'] }>).filter((t) => t.role === 'agent' && t.latency).map((t) => t.latency!);

    const heard = utterances(seen.sent);
    if (heard.length !== turns) throw new Error(`the page sent ${heard.length} utterances, not ${turns}`);
    const captured = seen.captured[0]!;
    return heard.map((utterance, turn) => {
      // Two estimates of the end in the sent stream; the earlier one counts (the answer's delay is not understated
      // when the browser's processing (gain control, noise suppression) softened the onset).
      const byOnset = utterance.onsetStep * STEP + (spans[turn]!.end - spans[turn]!.start);
      const detected = utterance.endStep * STEP;
      const endSample = Math.min(byOnset, detected);
      const speechEnd = captured.context + endSample / RATE;
      const played = seen.played.find((mark) => mark.context > speechEnd);
      if (!played) throw new Error(`turn ${turn + 1}: no agent audio played after the speech`);
      const raw = (played.context - speechEnd) * 1000;
      const runtime = latencies[turn] ?? null;
      const endedByVad = runtime !== null && runtime.stt_ms >= TALK_DELAYS.stt_final_ms;
      const subtracted = (endedByVad ? DEFAULT_SEGMENTER.endSilenceMs : endpointingMs) + TALK_DELAYS.stt_final_ms + TALK_DELAYS.llm_first_token_ms + TALK_DELAYS.tts_first_byte_ms;
      return {
        run, turn: turn + 1,
        raw_ms: round1(raw),
        raw_page_timeline_ms: round1(played.at - (captured.at + (endSample / RATE) * 1000)),
        subtracted_ms: subtracted,
        overhead_ms: round1(raw - subtracted),
        minus_520_ms: round1(raw - 520),
        // The end found in the sent audio (last loud 10 ms) minus onset + the WAV's length.
        speech_end_by_detection_offset_ms: (detected - byOnset) / (RATE / 1000),
        runtime,
        // What lies outside the runtime's own window (from its decision to the frame handed to the socket):
        // the audio reaching the stand-in, the final's trip back, the frame's trip to the page, the jitter buffer.
        outside_runtime_ms: runtime ? round1(raw - (endedByVad ? DEFAULT_SEGMENTER.endSilenceMs : endpointingMs) - TALK_DELAYS.stt_final_ms - runtime.total_ms) : null,
      };
    });
  }

  const overheads = samples.map((s) => s.overhead_ms);
  return {
    what: 'end of the fake microphone\'s speech → first agent audio played by the page (jitter buffer), on the page\'s audio clock, minus the fixed delays (see bench/console-talk.ts)',
    stand_in_delays_ms: TALK_DELAYS,
    questions: QUESTIONS.slice(0, turns),
    question_speech_ms: spans.map((span) => (span.end - span.start) / (RATE / 1000)),
    runs: options.runs, turns_per_run: turns, samples_measured: samples.length,
    page_audio: audio,
    // Per run: the audio clock's time since the capture's first sample minus the audio the page sent (ms).
    capture_clock_minus_sent_ms: captureGaps,
    overhead_ms: { p50: percentile(overheads, 50), p95: percentile(overheads, 95), min: Math.min(...overheads), max: Math.max(...overheads), target_p95_ms: 60 },
    raw_ms: { p50: percentile(samples.map((s) => s.raw_ms), 50), p95: percentile(samples.map((s) => s.raw_ms), 95) },
    minus_520_ms: { p50: percentile(samples.map((s) => s.minus_520_ms), 50), p95: percentile(samples.map((s) => s.minus_520_ms), 95) },
    outside_runtime_ms: { p50: percentile(samples.flatMap((s) => s.outside_runtime_ms ?? []), 50), p95: percentile(samples.flatMap((s) => s.outside_runtime_ms ?? []), 95) },
    runtime_total_ms: { p50: percentile(samples.flatMap((s) => s.runtime?.total_ms ?? []), 50), p95: percentile(samples.flatMap((s) => s.runtime?.total_ms ?? []), 95) },
    // How much later than their fixed delays the stand-ins' first chunks left (their process's clock): inside the overhead, not the platform's.
    standin_first_chunk_late_ms: {
      llm: { p50: round1(percentile(lateness.llm, 50) ?? 0), p95: round1(percentile(lateness.llm, 95) ?? 0) },
      tts: { p50: round1(percentile(lateness.tts, 50) ?? 0), p95: round1(percentile(lateness.tts, 95) ?? 0) },
    },
    samples,
    problems,
  };
}
