/**
 * In-memory stand-ins for the engine's tests: providers with scripted answers and fixed delays
 * (deterministic), a platform that records every report, and a phone line that plays caller audio in
 * real time and records what the agent sent, with the real pacer in between.
 */
import { performance } from 'node:perf_hooks';
import {
  ProviderError, type AudioFormat, type ChatMessage, type LlmChunk, type LlmRequest, type Providers, type SttOptions, type SttStream, type TtsRequest,
} from '../../src/providers/types.ts';
import type {
  CallPlatform, CallReport, KnowledgeHit, RuntimeAgent, RuntimeCallConfig, ToolCallResult,
} from '../../src/platform/call-platform.ts';
import type { CallTransport, TransportHandlers } from '../../src/engine/types.ts';
import { AudioPacer } from '../../src/transports/pacer.ts';
import { bytesPerSecond } from '../../src/audio/convert.ts';
import { MULAW_SILENCE } from '../../src/audio/mulaw.ts';
import { encodeFor, silenceFrame, speechPcm } from './speech.ts';
import { SentenceSplitter } from '../../src/engine/text.ts';
import { SILENCE_REPROMPT } from '../../src/engine/call-session.ts';

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface LlmScriptStep {
  /** Chunks of the answer, each after `delayMs` (the first after firstTokenMs). */
  text?: string[];
  toolCalls?: { name: string; arguments: Record<string, unknown> }[];
  firstTokenMs?: number;
  chunkMs?: number;
  fail?: ProviderError;
}

export class FakeProviders implements Providers {
  readonly sttTexts: string[];
  readonly llmScript: LlmScriptStep[];
  sttFinalMs = 150;
  ttsFirstByteMs = 120;
  sttOpenError: ProviderError | null = null;
  ttsError: ProviderError | null = null;
  readonly llmRequests: { messages: ChatMessage[]; tools: string[]; at: number }[] = [];
  readonly flushes: number[] = [];
  /** When each flush answered, each LLM stream gave its first text, each TTS its first audio, each TTS was asked: the fakes' own clock, to check the engine's latency against. */
  readonly sttFinals: number[] = [];
  readonly llmFirstTexts: number[] = [];
  readonly ttsFirstBytes: number[] = [];
  readonly ttsRequests: number[] = [];
  readonly ttsTexts: string[] = [];
  sttOptions: SttOptions | null = null;
  sttSeconds = 0;

  constructor(script: { stt: string[]; llm: LlmScriptStep[] }) {
    this.sttTexts = [...script.stt];
    this.llmScript = [...script.llm];
  }

  /**
   * Speaks every sentence the script will need before the call: eSpeak runs synchronously, and a
   * sentence made during the call would stall the event loop like no real TTS does.
   */
  async prepare(fixedTexts: string[], sampleRate: number) {
    const sentences = [...fixedTexts];
    for (const step of this.llmScript) {
      const splitter = new SentenceSplitter();
      sentences.push(...splitter.push((step.text ?? []).join('')), ...splitter.end());
    }
    for (const sentence of sentences) await speechPcm(sentence, sampleRate);
  }

  stt = {
    open: async (options: SttOptions): Promise<SttStream> => {
      if (this.sttOpenError) throw this.sttOpenError;
      this.sttOptions = options;
      const format = options.input;
      const perSecond = bytesPerSecond(format);
      return {
        format,
        write: (audio) => { this.sttSeconds += audio.length / perSecond; },
        flush: async () => {
          this.flushes.push(performance.now());
          await sleep(this.sttFinalMs);
          this.sttFinals.push(performance.now());
          return this.sttTexts.shift() ?? '';
        },
        audioSeconds: () => this.sttSeconds,
        close: async () => undefined,
      };
    },
  };

  llm = {
    stream: (request: LlmRequest): AsyncIterable<LlmChunk> => {
      this.llmRequests.push({ messages: structuredClone(request.messages), tools: request.tools.map((t) => t.name), at: performance.now() });
      const step = this.llmScript.shift() ?? { text: ['I am not sure.'] };
      const firstTexts = this.llmFirstTexts;
      return (async function* () {
        await sleep(step.firstTokenMs ?? 250);
        if (step.fail) throw step.fail;
        let first = true;
        for (const text of step.text ?? []) {
          if (!first) await sleep(step.chunkMs ?? 30);
          if (request.signal.aborted) return;
          if (first) firstTexts.push(performance.now());
          yield { type: 'text', text } as LlmChunk;
          first = false;
        }
        for (const [index, call] of (step.toolCalls ?? []).entries()) {
          yield { type: 'tool_call', call: { id: `call_${index}`, name: call.name, arguments: call.arguments } } as LlmChunk;
        }
        yield { type: 'usage', inputTokens: 1000, outputTokens: 100 } as LlmChunk;
      })();
    },
  };

  tts = {
    synthesize: async (request: TtsRequest) => {
      if (this.ttsError) throw this.ttsError;
      this.ttsTexts.push(request.text);
      const requestedAt = performance.now(); // the first byte comes ttsFirstByteMs after the request, however long speaking took
      this.ttsRequests.push(requestedAt);
      const firstBytes = this.ttsFirstBytes;
      const pcm = await speechPcm(request.text, request.want.sampleRate);
      const audio = encodeFor(pcm, request.want);
      const firstByteMs = this.ttsFirstByteMs;
      const chunkBytes = bytesPerSecond(request.want) / 10; // 100 ms
      return {
        format: request.want,
        audio: (async function* () {
          await sleep(Math.max(0, firstByteMs - (performance.now() - requestedAt)));
          for (let offset = 0; offset < audio.length; offset += chunkBytes) {
            if (request.signal.aborted) return;
            if (offset === 0) firstBytes.push(performance.now());
            yield audio.subarray(offset, offset + chunkBytes);
            await sleep(5);
          }
        })(),
      };
    },
  };
}

export function agentConfig(agent: Partial<RuntimeAgent> = {}, extra: Partial<RuntimeCallConfig> = {}): RuntimeCallConfig {
  const settings = (provider: string) => ({ provider, model: 'm', voice_id: null, credentials: { api_key: 'k' } });
  return {
    call: { call_sid: 'call_test0000000000000001', agent_id: 'agent_000000000001', call_type: 'inbound' },
    agent: {
      agent_id: 'agent_000000000001', system_prompt: 'You are {{agent_name}} of Acme, talking to {{customer}}.',
      first_message: 'Hello {{customer}}, this is Acme.', max_call_duration_seconds: 120, silence_timeout_seconds: 30,
      recording_enabled: false, interruptible: true, end_call_enabled: true, transfer_number: null, documentation_ids: [], ...agent,
    },
    variables: { customer: 'Ada', agent_name: 'Sam' },
    providers: { stt: settings('deepgram'), tts: settings('elevenlabs'), llm: settings('openai') },
    tools: [],
    ...extra,
  };
}

export class FakePlatform implements CallPlatform {
  readonly reports: CallReport[] = [];
  readonly toolCalls: { name: string; args: Record<string, unknown> }[] = [];
  readonly searches: string[] = [];
  recording: Buffer | null = null;
  toolAnswer: ToolCallResult = { status: 200, body: { slots: ['Tuesday 10:00'] }, duration_ms: 12 };
  hits: KnowledgeHit[] = [];
  readonly config: RuntimeCallConfig;
  constructor(config: RuntimeCallConfig) { this.config = config; }
  async load() { return structuredClone(this.config); }
  async report(patch: CallReport) { this.reports.push(structuredClone(patch)); }
  async uploadRecording(wav: Buffer) { this.recording = wav; }
  async callTool(name: string, args: Record<string, unknown>) { this.toolCalls.push({ name, args }); return this.toolAnswer; }
  async searchKnowledge(query: string) { this.searches.push(query); return this.hits; }
  get final(): CallReport | undefined { return this.reports.find((r) => r.status === 'completed' || r.status === 'failed'); }
}

/**
 * A phone line: the caller's side sends a 20 ms frame every 20 ms (speech when some is queued, line
 * silence otherwise), like a carrier; the agent's side goes through the real pacer and is recorded
 * with the time each frame went out. Marks count as played when the pacing says so.
 */
export class PhoneLine implements CallTransport {
  readonly agentFrames: { at: number; bytes: number }[] = [];
  readonly clears: number[] = [];
  readonly marks: string[] = [];
  readonly speaking: { speaking: boolean; at: number }[] = [];
  readonly #pacer: AudioPacer;
  #handlers: TransportHandlers | null = null;
  #queue: Buffer[] = [];
  #timer: NodeJS.Timeout | null = null;
  #next = 0;
  closed = false;
  speechStartedAt: number | null = null;
  speechEndedAt: number | null = null;

  readonly format: AudioFormat;
  constructor(format: AudioFormat) {
    this.format = format;
    const frameBytes = bytesPerSecond(format) / 50;
    this.#pacer = new AudioPacer({
      frameBytes, silenceByte: format.encoding === 'mulaw' ? MULAW_SILENCE : 0,
      sendFrame: (frame) => this.agentFrames.push({ at: performance.now(), bytes: frame.length }),
      sendMark: (name, playsAt, done) => { this.marks.push(name); setTimeout(done, Math.max(0, playsAt - performance.now())); },
    });
  }

  attach(handlers: TransportHandlers) {
    this.#handlers = handlers;
    this.#next = performance.now();
    const tick = () => {
      // Real time without drift: as many frames as the clock says are due.
      while (this.#next <= performance.now() && !this.closed) {
        const speech = this.#queue.shift();
        if (speech && this.speechStartedAt === null) this.speechStartedAt = performance.now();
        if (!speech && this.speechStartedAt !== null && this.speechEndedAt === null) this.speechEndedAt = performance.now();
        this.#handlers?.audio(speech ?? silenceFrame(this.format));
        this.#next += 20;
      }
      if (!this.closed) this.#timer = setTimeout(tick, Math.max(1, this.#next - performance.now()));
    };
    tick();
  }

  /** Queues the caller's speech; resolves when its last frame was sent. */
  say(frames: Buffer[]): Promise<void> {
    this.speechStartedAt = null;
    this.speechEndedAt = null;
    this.#queue.push(...frames);
    return new Promise((resolve) => {
      const check = setInterval(() => { if (this.speechEndedAt !== null) { clearInterval(check); resolve(); } }, 10);
    });
  }

  hangUp() { this.#handlers?.hangup(); }

  sendAudio(audio: Buffer) { this.#pacer.push(audio); }
  markUtteranceEnd(name: string) { return this.#pacer.mark(name); }
  sentMs() { return this.#pacer.acceptedMs(); }
  playedMs() { return this.#pacer.playedMs(); }
  clear() { this.clears.push(performance.now()); this.#pacer.clear(); }
  close() {
    this.closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#pacer.close();
  }
  agentSpeaking(speaking: boolean) { this.speaking.push({ speaking, at: performance.now() }); }

  /** ms of agent audio sent after `since`. */
  agentMsSince(since: number) { return this.agentFrames.filter((f) => f.at >= since).length * 20; }
}

/** Waits until `condition` holds, polling; fails after `timeoutMs`. */
export async function until(condition: () => boolean, timeoutMs = 15_000, what = 'condition'): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}
