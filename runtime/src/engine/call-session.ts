/**
 * One call, from the stream's start to the final report (extensions.md §10 "Conversation"). The
 * session loads the call through the platform, opens the providers, greets, then alternates caller
 * turns (CallerListener) and agent turns (AgentTurn) until a hang-up, a tool, a timer or a failing
 * provider ends it; it reports progress as turns finish and the full account at the end.
 */
import { performance } from 'node:perf_hooks';
import { ProviderError, type ChatMessage, type Providers, type SttStream } from '../providers/types.ts';
import type { CallError, CallPlatform, CallReport, EndReason, RuntimeCallConfig, TranscriptTurn } from '../platform/call-platform.ts';
import { CallAccount } from './call-account.ts';
import { StereoRecorder } from '../audio/stereo-recorder.ts';
import { AgentTurn } from './agent-turn.ts';
import { CallerListener, type CallerTurn } from './listener.ts';
import { DelayedAgentRecording } from './agent-recording.ts';
import { substituteVariables } from './text.ts';
import { offeredTools } from './tools.ts';
import { RECORDING_FORMAT, type CallTransport, type ConverterFactory, type EngineMetrics, type Prices, type Recorder } from './types.ts';
import type { SegmenterOptions } from './vad.ts';

/** Caller speech while the agent speaks that stops it (extensions.md §10: at least 250 ms). */
export const BARGE_IN_MS = 250;
export const SILENCE_REPROMPT = 'Are you still there?';
/** A browser preview has no carrier to end it if this process dies: a report this often says the call is alive. */
export const PREVIEW_HEARTBEAT_MS = 15_000;
/** Caller audio kept while the providers open, so the first words are not lost. */
const EARLY_AUDIO_FRAMES = 500;

/** The agent's provider settings and language (TTS voices and STT models are chosen by it) → the adapters. */
export type ProvidersFactory = (settings: RuntimeCallConfig['providers'], language: string) => Providers | Promise<Providers>;

export interface Logger {
  info(object: object, message?: string): void;
  warn(object: object, message?: string): void;
  error(object: object, message?: string): void;
}

export interface CallSessionOptions {
  platform: CallPlatform;
  transport: CallTransport;
  providersFactory: ProvidersFactory;
  convert: ConverterFactory;
  prices: Prices;
  /** Whether the leg is a carrier call (telephony minutes are priced); a browser preview is not. */
  telephony: boolean;
  recorderFactory?: () => Recorder;
  metrics?: EngineMetrics;
  logger?: Logger;
  segmenter?: SegmenterOptions;
  /** A preview's progress report interval (PREVIEW_HEARTBEAT_MS). */
  heartbeatMs?: number;
}

export interface CallOutcome {
  endReason: EndReason;
  report: CallReport;
}

export class CallSession {
  readonly #o: CallSessionOptions;
  readonly #startedAt = performance.now();
  readonly #messages: ChatMessage[] = [];
  readonly #account: CallAccount;
  #config!: RuntimeCallConfig;
  #providers!: Providers;
  #stt: SttStream | null = null;
  #listener: CallerListener | null = null;
  #recorder: Recorder | null = null;
  #agentRecording: DelayedAgentRecording | null = null;
  #early: Buffer[] = [];
  #turn: AgentTurn | null = null;
  #turnChain: Promise<void> = Promise.resolve();
  #unanswered: CallerTurn[] = [];
  #timers = new Set<NodeJS.Timeout>();
  #silenceTimer: NodeJS.Timeout | null = null;
  #reprompted = false;
  #ended = false;
  #resolve!: (outcome: CallOutcome) => void;
  readonly done: Promise<CallOutcome>;

  constructor(options: CallSessionOptions) {
    this.#o = options;
    this.#account = new CallAccount({ platform: options.platform, prices: options.prices, telephony: options.telephony, logger: options.logger });
    this.done = new Promise((resolve) => { this.#resolve = resolve; });
    options.transport.attach({
      audio: (frame) => this.#callerAudio(frame),
      dtmf: (digit) => this.#o.logger?.info({ digit }, 'dtmf'),
      hangup: () => void this.end('user_hangup'),
    });
  }

  get callSid() { return this.#config?.call.call_sid; }
  /** ms since the stream started: the clock of the transcript and the recording. */
  callMs() { return performance.now() - this.#startedAt; }

  /** Loads the call, opens the providers and greets; the returned promise is `done`. */
  async run(): Promise<CallOutcome> {
    try {
      this.#config = await this.#o.platform.load();
    } catch (error) {
      // Without the call's configuration there is nobody to report to: the carrier's status ends it.
      this.#o.logger?.error({ err: error }, 'runtime: the call could not be loaded');
      this.#ended = true;
      if (this.#o.transport.refuse) this.#o.transport.refuse('the call could not be loaded: its token was refused or the call is unknown');
      else this.#o.transport.close();
      this.#resolve({ endReason: 'error', report: {} });
      return this.done;
    }
    if (this.#ended) return this.done; // the caller hung up while the call was loading
    const { agent, variables } = this.#config;
    this.#account.callSid = this.#config.call.call_sid;
    this.#messages.push({ role: 'system', content: substituteVariables(agent.system_prompt ?? '', variables) });
    void this.#account.report({ status: 'in_progress' });
    if (!this.#o.telephony) this.#heartbeat();
    this.#timer(() => void this.end('max_duration'), agent.max_call_duration_seconds * 1000);
    try {
      this.#providers = await this.#o.providersFactory(this.#config.providers, String(agent.language ?? 'en'));
      this.#stt = await this.#providers.stt.open({
        input: this.#o.transport.format,
        language: String(agent.language ?? 'en'),
        onTranscript: (text, final) => { if (!final) this.#o.transport.transcript?.('user', text, false); },
        onEndOfUtterance: () => this.#listener?.sttEndOfUtterance(),
        onError: (error) => void this.fail(error),
      });
      if (agent.recording_enabled ?? this.#config.call.recording_enabled) {
        this.#recorder = (this.#o.recorderFactory ?? (() => new StereoRecorder(RECORDING_FORMAT.sampleRate)))();
        this.#agentRecording = new DelayedAgentRecording(this.#recorder);
      }
      this.#listener = await CallerListener.create({
        format: this.#o.transport.format, stt: this.#stt, convert: this.#o.convert, segmenter: this.#o.segmenter,
        record: this.#recorder ? (frame, atMs) => this.#recorder!.addCaller(atMs, frame, RECORDING_FORMAT) : null,
        events: {
          speechStart: () => this.#speechStarted(),
          speaking: (forMs) => this.#callerSpeaking(forMs),
          turnEnd: (turn) => this.#callerTurnEnded(turn),
        },
      });
    } catch (error) {
      void this.fail(error);
      return this.done;
    }
    if (this.#ended) return this.done;
    for (const frame of this.#early.splice(0)) this.#listener.audio(frame);
    const greeting = agent.first_message ? substituteVariables(agent.first_message, variables) : '';
    if (greeting) this.#startTurn((turn) => turn.speakFixed(greeting));
    else this.#armSilence();
    return this.done;
  }

  #callerAudio(frame: Buffer) {
    if (this.#ended) return;
    if (!this.#listener) {
      if (this.#early.length < EARLY_AUDIO_FRAMES) this.#early.push(frame);
      return;
    }
    this.#listener.audio(frame);
    this.#agentRecording?.commitUntil(this.callMs());
  }

  #speechStarted() {
    this.#cancelSilence();
    this.#reprompted = false;
  }

  /** Barge-in: the caller talks over the agent (or over its thinking) for long enough. */
  #callerSpeaking(forMs: number) {
    const turn = this.#turn;
    if (!turn || turn.finished || turn.interrupted || forMs < BARGE_IN_MS || this.#config.agent.interruptible === false) return;
    turn.interrupt();
    this.#agentRecording?.dropFrom(this.callMs());
  }

  #callerTurnEnded(callerTurn: CallerTurn) {
    const turn = this.#turn;
    // A short "mm-hm" under the agent's speech neither stops nor starts a turn; its words go with the next one.
    if (turn && !turn.finished && !turn.interrupted && callerTurn.endMs - callerTurn.startMs < BARGE_IN_MS) return;
    if (this.#turn && !this.#turn.finished && this.#config.agent.interruptible === false) {
      this.#unanswered.push(callerTurn); // answered once the agent finished speaking
      return;
    }
    this.#startTurn((turn) => turn.answer(callerTurn));
  }

  /** Agent turns run one after another; a new one waits for an interrupted one to wind down. */
  #startTurn(body: (turn: AgentTurn) => Promise<void>) {
    this.#cancelSilence();
    this.#turnChain = this.#turnChain.then(async () => {
      if (this.#ended) return;
      const turn = new AgentTurn(this.#turnContext());
      this.#turn = turn;
      try {
        await body(turn);
      } catch (error) {
        await this.fail(error);
        return;
      } finally {
        this.#account.addTtsCharacters(turn.ttsCharacters);
      }
      if (this.#ended) return;
      if (turn.endsCall) return void this.end(turn.endsCall);
      const waiting = this.#unanswered.splice(0);
      if (waiting.length) return void this.#startTurn((next) => next.answer(waiting.at(-1)!, waiting.slice(0, -1)));
      if (!this.#listener?.speaking) this.#armSilence();
    });
  }

  #turnContext() {
    return {
      config: this.#config,
      providers: this.#providers,
      stt: this.#stt!,
      transport: this.#o.transport,
      platform: this.#o.platform,
      convert: this.#o.convert,
      messages: this.#messages,
      tools: offeredTools(this.#config),
      callMs: () => this.callMs(),
      addTurn: (turn: TranscriptTurn) => {
        this.#account.addTurn(turn);
        if (turn.role !== 'tool') this.#o.transport.transcript?.(turn.role, turn.text, true);
        if (turn.latency) {
          this.#o.metrics?.turnLatency?.(turn.latency.total_ms);
          this.#o.transport.turn?.(turn.latency);
        }
      },
      usage: (input: number, output: number) => this.#account.addLlmTokens(input, output),
      record: this.#agentRecording ? (frame: Buffer, atMs: number) => this.#agentRecording!.add(frame, atMs) : undefined,
    };
  }

  /** Silence rule: one reprompt at half of silence_timeout_seconds, then the end at the full time. */
  #armSilence() {
    this.#cancelSilence();
    const halfMs = ((this.#config.agent.silence_timeout_seconds ?? 30) * 1000) / 2;
    this.#silenceTimer = this.#timer(() => {
      if (this.#reprompted) return void this.end('silence_timeout');
      this.#reprompted = true;
      this.#startTurn((turn) => turn.speakFixed(SILENCE_REPROMPT));
    }, halfMs);
  }

  #cancelSilence() {
    if (this.#silenceTimer) clearTimeout(this.#silenceTimer);
    this.#silenceTimer = null;
  }

  /** The platform ends a preview call it has not heard of for a while (extensions.md §10: its runtime died). */
  #heartbeat() {
    this.#timer(() => { void this.#account.report({}); this.#heartbeat(); }, this.#o.heartbeatMs ?? PREVIEW_HEARTBEAT_MS);
  }

  #timer(action: () => void, ms: number) {
    const timer = setTimeout(() => { this.#timers.delete(timer); action(); }, ms);
    this.#timers.add(timer);
    return timer;
  }

  /** A provider (or anything else) failed: the call ends `failed` / `error` with the provider named. */
  async fail(error: unknown): Promise<void> {
    const callError: CallError = error instanceof ProviderError
      ? { provider: error.provider, code: error.code, message: error.message }
      : { provider: 'runtime', code: 'internal_error', message: error instanceof Error ? error.message : String(error) };
    this.#o.metrics?.providerError?.(callError.provider);
    this.#o.logger?.warn({ err: error, call_sid: this.callSid }, 'runtime: the call fails');
    await this.end('error', callError);
  }

  async end(endReason: EndReason, error?: CallError): Promise<void> {
    if (this.#ended) return;
    this.#ended = true;
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    const turn = this.#turn;
    if (turn && !turn.finished) {
      // The agent is cut off by the end (hang-up, maximum duration): keep what was heard.
      if (endReason === 'user_hangup' || endReason === 'max_duration') turn.interrupt();
      else turn.abort();
      await Promise.race([this.#turnChain, new Promise((resolve) => setTimeout(resolve, 2000))]);
    }
    const durationMs = this.callMs();
    await this.#stt?.close().catch(() => undefined);
    this.#listener?.close();
    const report = this.#account.final(endReason, durationMs, this.#stt?.audioSeconds() ?? 0, error);
    this.#o.transport.ended?.(endReason);
    await this.#account.report(report);
    if (this.#recorder && this.#config) {
      this.#agentRecording!.commitUntil(durationMs);
      await this.#o.platform.uploadRecording(this.#recorder.toWav(durationMs))
        .catch((uploadError: unknown) => this.#o.logger?.error({ err: uploadError, call_sid: this.callSid }, 'runtime: recording upload failed'));
    }
    this.#o.transport.close();
    this.#resolve({ endReason, report });
  }
}
