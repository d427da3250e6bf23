/**
 * The contract between the conversation engine and the provider adapters. The engine knows no
 * vendor: it asks an STT stream for the caller's words, an LLM for a streamed answer with tool
 * calls, and a TTS for audio, each through these interfaces; each adapter speaks one vendor's
 * documented wire protocol (see runtime/README.md, "Providers").
 */

/** Mono audio as it travels: 8-bit μ-law or 16-bit little-endian signed PCM, at a sample rate. */
export type AudioEncoding = 'mulaw' | 'pcm16';
export interface AudioFormat {
  encoding: AudioEncoding;
  sampleRate: number;
}
/** The carrier leg (Media Streams) and the browser preview leg. */
export const CARRIER_FORMAT: AudioFormat = { encoding: 'mulaw', sampleRate: 8000 };
export const PREVIEW_FORMAT: AudioFormat = { encoding: 'pcm16', sampleRate: 16000 };

/** What `GET /api/runtime/calls/{call_sid}` hands the runtime for one provider. */
export interface ProviderSettings {
  /** The agent's setting: deepgram | assemblyai | whisper; elevenlabs | cartesia | openai | azure; openai | groq | anthropic | google. */
  provider: string;
  model: string | null;
  voice_id?: string | null;
  credentials: { api_key: string; base_url?: string | null; region?: string | null };
}

/** A provider that is not configured, refuses or fails: the call ends `error` with this on it. */
export class ProviderError extends Error {
  readonly provider: string;
  readonly code: string;
  constructor(provider: string, code: string, message: string) {
    super(message);
    this.name = 'ProviderError';
    this.provider = provider;
    this.code = code;
  }
}

// ---- speech to text ----

export interface SttOptions {
  /** The leg's format; the adapter picks what the vendor accepts (see `SttStream.format`). */
  input: AudioFormat;
  /** Agent language, e.g. EN or EN-US. */
  language: string;
  /** Interim and final text as the vendor sends it (for the live transcript); optional to show. */
  onTranscript?: (text: string, final: boolean) => void;
  /** The vendor's own end-of-utterance signal (endpointing), where it has one. */
  onEndOfUtterance?: () => void;
  /** A failure after open (socket closed, vendor error message). */
  onError: (error: ProviderError) => void;
}

export interface SttStream {
  /** The format `write` expects: the leg's own where the vendor takes it (μ-law 8 kHz on the carrier leg). */
  readonly format: AudioFormat;
  /** Caller audio, in `format`, as it arrives (20 ms frames). */
  write(audio: Buffer): void;
  /**
   * The caller stopped speaking (voice activity detection or the vendor's endpointing): resolves with
   * the final text of everything written since the previous flush ('' when nothing was said).
   * Streaming vendors are asked to finalize (Deepgram `Finalize`, AssemblyAI `ForceEndpoint`);
   * per-utterance vendors (Whisper) transcribe the buffered utterance.
   */
  flush(): Promise<string>;
  /** Seconds of audio sent to the vendor so far (priced per STT minute). */
  audioSeconds(): number;
  close(): Promise<void>;
}

export interface SttProvider {
  open(options: SttOptions): Promise<SttStream>;
}

// ---- language model ----

export interface ToolFunction {
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
}

export interface ToolCall {
  /** The vendor's id of the call (generated where the vendor has none, e.g. Google). */
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls?: ToolCall[] }
  | { role: 'tool'; toolCallId: string; name: string; content: string };

export interface LlmRequest {
  model: string;
  messages: ChatMessage[];
  tools: ToolFunction[];
  temperature: number;
  maxTokens?: number;
  signal: AbortSignal;
}

export type LlmChunk =
  | { type: 'text'; text: string }
  /** A complete tool call (arguments fully streamed and parsed). */
  | { type: 'tool_call'; call: ToolCall }
  | { type: 'usage'; inputTokens: number; outputTokens: number };

export interface LlmProvider {
  /** Streams the answer; throws ProviderError on refusal or failure; stops quietly when `signal` aborts. */
  stream(request: LlmRequest): AsyncIterable<LlmChunk>;
}

// ---- text to speech ----

export interface TtsRequest {
  text: string;
  voiceId: string | null;
  model: string | null;
  /** The leg's format; the adapter asks the vendor for it where it can (μ-law 8 kHz, PCM 16 kHz). */
  want: AudioFormat;
  signal: AbortSignal;
}

export interface TtsResult {
  /** What the vendor actually sends; the engine converts (resampling with a real resampler) when it differs from `want`. */
  format: AudioFormat;
  /** Audio as it streams from the vendor (chunks of any size, whole samples). */
  audio: AsyncIterable<Buffer>;
}

export interface TtsProvider {
  synthesize(request: TtsRequest): Promise<TtsResult>;
}

export interface Providers {
  stt: SttProvider;
  llm: LlmProvider;
  tts: TtsProvider;
}
