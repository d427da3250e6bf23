/**
 * What the conversation engine needs from the world besides the providers: a transport for the
 * leg's audio (carrier Media Streams or the browser preview), audio conversion, and a recorder.
 * Each is an interface so that the engine stays transport- and codec-agnostic.
 */
import type { AudioConverter } from '../audio/convert.ts';
import type { StereoRecorder } from '../audio/stereo-recorder.ts';
import type { AudioFormat } from '../providers/types.ts';
import type { EndReason, TurnLatency } from '../platform/call-platform.ts';

/** What a transport tells the engine. */
export interface TransportHandlers {
  /** Caller audio in the leg's format (normally 20 ms frames). */
  audio(frame: Buffer): void;
  dtmf(digit: string): void;
  /** The far end hung up (carrier `stop`, the browser's `{type: "end"}`, or the socket closed). */
  hangup(): void;
}

/** Optional live events for a transport that shows the conversation (the browser preview). */
export interface TransportUiEvents {
  transcript?(role: 'agent' | 'user', text: string, final: boolean): void;
  agentSpeaking?(speaking: boolean): void;
  turn?(latency: TurnLatency): void;
  ended?(endReason: EndReason): void;
}

export interface CallTransport extends TransportUiEvents {
  readonly format: AudioFormat;
  /** The engine's handlers; called once before any audio flows. */
  attach(handlers: TransportHandlers): void;
  /** Agent audio in `format`, any length; the transport frames it and paces it in real time. */
  sendAudio(audio: Buffer): void;
  /** Resolves when everything sent before it has been played (carrier marks; preview: by the pacing). */
  markUtteranceEnd(name: string): Promise<void>;
  /** Milliseconds of agent audio accepted by `sendAudio` since the call started (cleared audio excluded). */
  sentMs(): number;
  /** Milliseconds of agent audio the far end has played since the call started. */
  playedMs(): number;
  /** Drops the agent audio not yet played (barge-in); pending marks resolve. */
  clear(): void;
  /** Stops sending and closes the stream (after the final report). */
  close(): void;
  /** Closes a stream whose call could not be loaded (its token refused, the call unknown); `close` when absent. */
  refuse?(reason: string): void;
}

/**
 * Audio conversion is the audio layer's (`src/audio/convert.ts`): a streaming converter (μ-law ⇄ PCM16,
 * the Speex resampler with state across chunks) whose `end()` flushes the filter's tail and frees it.
 * The factory is injectable so a composition could swap it; `convertAudio` is the default.
 */
export type { AudioConverter };
export type ConverterFactory = (from: AudioFormat, to: AudioFormat) => AudioConverter;

/** The recording's format: 16-bit little-endian PCM, 8 kHz, one channel per party (extensions.md §10). */
export const RECORDING_FORMAT: AudioFormat = { encoding: 'pcm16', sampleRate: 8000 };

/**
 * Records both parties time-aligned (the audio layer's `StereoRecorder` is the implementation):
 * frames are placed at the call time (ms) they were heard or played; `toWav(durationMs)` gives a
 * stereo WAV (caller left, agent right) at least as long as the call.
 */
export type Recorder = Pick<StereoRecorder, 'addCaller' | 'addAgent' | 'toWav'>;

/** Prices in credits (extensions.md §10, `PRICES_FILE`). */
export interface Prices {
  stt_per_minute: number;
  llm_per_1k_input: number;
  llm_per_1k_output: number;
  tts_per_1k_chars: number;
  telephony_per_minute: number;
}

/** What the engine reports for metrics (the server's `/metrics`). */
export interface EngineMetrics {
  turnLatency?(totalMs: number): void;
  providerError?(provider: string): void;
}
