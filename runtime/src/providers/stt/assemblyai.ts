/**
 * AssemblyAI Universal Streaming (v3): a WebSocket to {base}/v3/ws with `Authorization: KEY`,
 * audio as binary frames (μ-law 8 kHz as `pcm_mulaw` on the carrier leg), `Turn` messages with
 * `end_of_turn` (formatted once more with `format_turns`), `ForceEndpoint` to end a turn now and
 * `Terminate` to close. The vendor takes 50-1000 ms of audio per message, so 20 ms frames are
 * gathered into 50 ms.
 */
import WebSocket from 'ws';
import { bytesPerSecond } from '../../audio/convert.ts';
import { MULAW_SILENCE } from '../../audio/mulaw.ts';
import { webSocketBase } from '../http.ts';
import { ProviderError, type AudioFormat, type ProviderSettings, type SttOptions, type SttProvider, type SttStream } from '../types.ts';
import type { StreamingSttTuning } from './deepgram.ts';
import { closeSocket, openSocket } from './socket.ts';

export const ASSEMBLYAI_STREAMING_BASE = 'https://streaming.assemblyai.com';
/** The least audio AssemblyAI accepts in one message. */
export const ASSEMBLYAI_MIN_CHUNK_MS = 50;

interface Waiter {
  resolve: (text: string) => void;
  reject: (error: ProviderError) => void;
  timer: NodeJS.Timeout;
}

export class AssemblyAiStt implements SttProvider {
  private readonly settings: ProviderSettings;
  private readonly tuning: StreamingSttTuning;

  constructor(settings: ProviderSettings, tuning: StreamingSttTuning = {}) {
    this.settings = settings;
    this.tuning = tuning;
  }

  async open(options: SttOptions): Promise<SttStream> {
    const format = options.input;
    const query = new URLSearchParams({
      sample_rate: String(format.sampleRate),
      encoding: format.encoding === 'mulaw' ? 'pcm_mulaw' : 'pcm_s16le',
      format_turns: 'true',
    });
    // The default model is English only; another model (e.g. universal-streaming-multilingual) is the integration's `model`.
    if (this.settings.model) query.set('speech_model', this.settings.model);
    const url = `${webSocketBase(this.settings.credentials.base_url, ASSEMBLYAI_STREAMING_BASE)}/v3/ws?${query}`;
    const socket = await openSocket('assemblyai', url, { authorization: this.settings.credentials.api_key });
    return new AssemblyAiStream(socket, format, options, this.tuning.flushTimeoutMs ?? 1500);
  }
}

class AssemblyAiStream implements SttStream {
  readonly format: AudioFormat;
  private readonly socket: WebSocket;
  private readonly options: SttOptions;
  private readonly flushTimeoutMs: number;
  private readonly chunkBytes: number;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private finals: string[] = [];
  /** A turn is open (the vendor has sent words of it and not yet ended it). */
  private turnOpen = false;
  private waiters: Waiter[] = [];
  private bytesSent = 0;
  private closing = false;
  private failed: ProviderError | null = null;

  constructor(socket: WebSocket, format: AudioFormat, options: SttOptions, flushTimeoutMs: number) {
    this.socket = socket;
    this.format = format;
    this.options = options;
    this.flushTimeoutMs = flushTimeoutMs;
    this.chunkBytes = Math.ceil((bytesPerSecond(format) * ASSEMBLYAI_MIN_CHUNK_MS) / 1000);
    socket.on('message', (data, isBinary) => {
      if (!isBinary) this.onMessage(data.toString());
    });
    socket.on('error', () => {});
    socket.on('close', (code, reason) => {
      if (this.closing) return this.settle();
      // 1008: refused (key, quota); 3005/3007: the audio or a message broke the protocol.
      const codeName = code === 1008 ? 'unauthorized' : code >= 3000 && code < 4000 ? 'bad_request' : 'unavailable';
      this.fail(new ProviderError('assemblyai', codeName, `assemblyai closed the stream (${code}${reason.length ? `: ${reason.toString()}` : ''})`));
    });
  }

  write(audio: Buffer): void {
    if (this.closing || this.failed) return;
    this.pending.push(audio);
    this.pendingBytes += audio.length;
    if (this.pendingBytes >= this.chunkBytes) this.sendPending();
  }

  flush(): Promise<string> {
    if (this.failed) return Promise.reject(this.failed);
    // The turn already ended (end_of_turn came) and nothing has been heard since: nothing to force.
    if (!this.turnOpen && this.finals.length > 0) return Promise.resolve(this.take());
    this.sendPending(true);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((waiter) => waiter.timer !== timer);
        resolve(this.take());
      }, this.flushTimeoutMs);
      this.waiters.push({ resolve, reject, timer });
      this.send(JSON.stringify({ type: 'ForceEndpoint' }));
    });
  }

  audioSeconds(): number {
    return this.bytesSent / bytesPerSecond(this.format);
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    this.send(JSON.stringify({ type: 'Terminate' }));
    await closeSocket(this.socket);
    this.settle();
  }

  /** Sends the gathered audio; on a flush, a remainder shorter than the vendor's minimum is padded with silence. */
  private sendPending(pad = false): void {
    if (this.pendingBytes === 0) return;
    let audio = Buffer.concat(this.pending);
    this.pending = [];
    this.pendingBytes = 0;
    if (pad && audio.length < this.chunkBytes) {
      const silence = Buffer.alloc(this.chunkBytes - audio.length, this.format.encoding === 'mulaw' ? MULAW_SILENCE : 0);
      audio = Buffer.concat([audio, silence]);
    }
    this.bytesSent += audio.length;
    this.send(audio);
  }

  private onMessage(text: string): void {
    let message: AssemblyAiMessage;
    try {
      message = JSON.parse(text) as AssemblyAiMessage;
    } catch {
      return this.fail(new ProviderError('assemblyai', 'protocol', `assemblyai sent a malformed message: ${text.slice(0, 200)}`));
    }
    if (message.type === 'Error' || message.error) return this.fail(new ProviderError('assemblyai', 'protocol', `assemblyai error: ${message.error ?? 'unknown'}`));
    if (message.type !== 'Turn') return; // Begin, Termination
    const transcript = message.transcript ?? '';
    if (!message.end_of_turn) {
      if (transcript !== '') {
        this.turnOpen = true;
        this.options.onTranscript?.(transcript, false);
      }
      return;
    }
    // With format_turns the turn ends twice: raw, then formatted. The formatted one is the final text.
    if (!message.turn_is_formatted) return;
    this.turnOpen = false;
    if (transcript !== '') this.finals.push(transcript);
    this.options.onTranscript?.(transcript, true);
    if (this.waiters.length > 0) {
      const result = this.take();
      for (const waiter of this.waiters.splice(0)) {
        clearTimeout(waiter.timer);
        waiter.resolve(result);
      }
    } else this.options.onEndOfUtterance?.();
  }

  private take(): string {
    const text = this.finals.join(' ');
    this.finals = [];
    return text;
  }

  private send(data: Buffer | string): void {
    if (this.socket.readyState === WebSocket.OPEN) this.socket.send(data);
  }

  private settle(): void {
    const text = this.take();
    for (const waiter of this.waiters.splice(0)) {
      clearTimeout(waiter.timer);
      waiter.resolve(text);
    }
  }

  private fail(error: ProviderError): void {
    if (this.failed || this.closing) return;
    this.failed = error;
    for (const waiter of this.waiters.splice(0)) {
      clearTimeout(waiter.timer);
      waiter.reject(error);
    }
    this.socket.terminate();
    this.options.onError(error);
  }
}

interface AssemblyAiMessage {
  type?: string;
  transcript?: string;
  end_of_turn?: boolean;
  turn_is_formatted?: boolean;
  error?: string;
}
