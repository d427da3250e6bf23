/**
 * Deepgram live transcription: a WebSocket to {base}/v1/listen with `Authorization: Token KEY`,
 * audio as binary frames in the leg's own encoding (μ-law 8 kHz on the carrier leg), interim
 * results, and Deepgram's endpointing (`speech_final`). A flush sends `Finalize`, answered by a
 * result marked `from_finalize`.
 */
import WebSocket from 'ws';
import { bytesPerSecond } from '../../audio/convert.ts';
import { languageTag, webSocketBase } from '../http.ts';
import { ProviderError, type AudioFormat, type ProviderSettings, type SttOptions, type SttProvider, type SttStream } from '../types.ts';
import { closeSocket, openSocket } from './socket.ts';

export const DEEPGRAM_BASE = 'https://api.deepgram.com';
/** Silence (ms) after which Deepgram declares the utterance over (`speech_final`). */
export const DEEPGRAM_ENDPOINTING_MS = 300;
/** Deepgram closes a stream that gets nothing for 10 s; KeepAlive is sent after this long without audio. */
const KEEPALIVE_MS = 5000;

export interface StreamingSttTuning {
  /** How long a flush waits for the vendor's final answer before settling for what it has. */
  flushTimeoutMs?: number;
}

interface Waiter {
  resolve: (text: string) => void;
  reject: (error: ProviderError) => void;
  timer: NodeJS.Timeout;
}

export class DeepgramStt implements SttProvider {
  private readonly settings: ProviderSettings;
  private readonly tuning: StreamingSttTuning;

  constructor(settings: ProviderSettings, tuning: StreamingSttTuning = {}) {
    this.settings = settings;
    this.tuning = tuning;
  }

  async open(options: SttOptions): Promise<SttStream> {
    const format: AudioFormat = options.input;
    const query = new URLSearchParams({
      model: this.settings.model ?? 'nova-2',
      language: languageTag(options.language),
      encoding: format.encoding === 'mulaw' ? 'mulaw' : 'linear16',
      sample_rate: String(format.sampleRate),
      channels: '1',
      interim_results: 'true',
      endpointing: String(DEEPGRAM_ENDPOINTING_MS),
      punctuate: 'true',
      smart_format: 'true',
    });
    const url = `${webSocketBase(this.settings.credentials.base_url, DEEPGRAM_BASE)}/v1/listen?${query}`;
    const socket = await openSocket('deepgram', url, { authorization: `Token ${this.settings.credentials.api_key}` });
    return new DeepgramStream(socket, format, options, this.tuning.flushTimeoutMs ?? 2000);
  }
}

class DeepgramStream implements SttStream {
  readonly format: AudioFormat;
  private readonly socket: WebSocket;
  private readonly options: SttOptions;
  private readonly flushTimeoutMs: number;
  private finals: string[] = [];
  /** The last word Deepgram said about the audio was `speech_final`: nothing is left to finalize. */
  private endpointed = false;
  private waiters: Waiter[] = [];
  private bytesSent = 0;
  private lastAudioAt = Date.now();
  private readonly keepAlive: NodeJS.Timeout;
  private closing = false;
  private failed: ProviderError | null = null;

  constructor(socket: WebSocket, format: AudioFormat, options: SttOptions, flushTimeoutMs: number) {
    this.socket = socket;
    this.format = format;
    this.options = options;
    this.flushTimeoutMs = flushTimeoutMs;
    this.keepAlive = setInterval(() => {
      if (Date.now() - this.lastAudioAt >= KEEPALIVE_MS) this.send(JSON.stringify({ type: 'KeepAlive' }));
    }, KEEPALIVE_MS);
    socket.on('message', (data, isBinary) => {
      if (!isBinary) this.onMessage(data.toString());
    });
    socket.on('error', () => {}); // 'close' follows and reports
    socket.on('close', (code, reason) => {
      clearInterval(this.keepAlive);
      if (this.closing) return this.settle();
      const codeName = code === 1008 ? 'bad_request' : 'unavailable';
      this.fail(new ProviderError('deepgram', codeName, `deepgram closed the stream (${code}${reason.length ? `: ${reason.toString()}` : ''})`));
    });
  }

  write(audio: Buffer): void {
    if (this.closing || this.failed) return;
    this.bytesSent += audio.length;
    this.lastAudioAt = Date.now();
    this.send(audio);
  }

  flush(): Promise<string> {
    if (this.failed) return Promise.reject(this.failed);
    if (this.endpointed) return Promise.resolve(this.take());
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((waiter) => waiter.timer !== timer);
        resolve(this.take());
      }, this.flushTimeoutMs);
      this.waiters.push({ resolve, reject, timer });
      this.send(JSON.stringify({ type: 'Finalize' }));
    });
  }

  audioSeconds(): number {
    return this.bytesSent / bytesPerSecond(this.format);
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    clearInterval(this.keepAlive);
    this.send(JSON.stringify({ type: 'CloseStream' }));
    await closeSocket(this.socket);
    this.settle();
  }

  private onMessage(text: string): void {
    let message: DeepgramMessage;
    try {
      message = JSON.parse(text) as DeepgramMessage;
    } catch {
      return this.fail(new ProviderError('deepgram', 'protocol', `deepgram sent a malformed message: ${text.slice(0, 200)}`));
    }
    if (message.type === 'Error') return this.fail(new ProviderError('deepgram', 'protocol', `deepgram error: ${message.description ?? message.message ?? 'unknown'}`));
    if (message.type !== 'Results') return; // Metadata, SpeechStarted, UtteranceEnd
    const transcript = message.channel?.alternatives?.[0]?.transcript ?? '';
    if (message.is_final) {
      if (transcript !== '') this.finals.push(transcript);
      this.options.onTranscript?.(transcript, true);
    } else if (transcript !== '') this.options.onTranscript?.(transcript, false);
    if (transcript !== '' || message.speech_final) this.endpointed = Boolean(message.speech_final);
    if (message.from_finalize && this.waiters.length > 0) {
      const waiters = this.waiters;
      this.waiters = [];
      const text = this.take();
      for (const waiter of waiters) {
        clearTimeout(waiter.timer);
        waiter.resolve(text);
      }
    } else if (message.speech_final) this.options.onEndOfUtterance?.();
  }

  private take(): string {
    const text = this.finals.join(' ');
    this.finals = [];
    this.endpointed = false;
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
    clearInterval(this.keepAlive);
    for (const waiter of this.waiters.splice(0)) {
      clearTimeout(waiter.timer);
      waiter.reject(error);
    }
    this.socket.terminate();
    this.options.onError(error);
  }
}

interface DeepgramMessage {
  type?: string;
  channel?: { alternatives?: Array<{ transcript?: string }> };
  is_final?: boolean;
  speech_final?: boolean;
  from_finalize?: boolean;
  description?: string;
  message?: string;
}
