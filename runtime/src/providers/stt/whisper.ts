/**
 * Whisper (OpenAI's, or any compatible server such as faster-whisper-server or whisper.cpp's):
 * no streaming, so the utterance is gathered and, on flush, sent as a WAV to
 * POST {base}/v1/audio/transcriptions (multipart: file, model, language).
 */
import { bytesPerSecond, decodeToSamples } from '../../audio/convert.ts';
import { concatSamples } from '../../audio/pcm.ts';
import { encodeWav } from '../../audio/wav.ts';
import { languageCode, openAiBase, vendorFetch } from '../http.ts';
import { OPENAI_BASE } from '../llm/openai.ts';
import { ProviderError, type AudioFormat, type ProviderSettings, type SttOptions, type SttProvider, type SttStream } from '../types.ts';

/** Shorter utterances are not worth a request (and Whisper invents words for near-silence). */
export const WHISPER_MIN_UTTERANCE_MS = 100;

export class WhisperStt implements SttProvider {
  private readonly settings: ProviderSettings;

  constructor(settings: ProviderSettings) {
    this.settings = settings;
  }

  async open(options: SttOptions): Promise<SttStream> {
    return new WhisperStream(this.settings, options);
  }
}

class WhisperStream implements SttStream {
  readonly format: AudioFormat;
  private readonly settings: ProviderSettings;
  private readonly options: SttOptions;
  private utterance: Int16Array[] = [];
  private utteranceBytes = 0;
  private secondsSent = 0;
  private readonly closed = new AbortController();

  constructor(settings: ProviderSettings, options: SttOptions) {
    this.settings = settings;
    this.options = options;
    this.format = options.input;
  }

  write(audio: Buffer): void {
    if (this.closed.signal.aborted) return;
    this.utterance.push(decodeToSamples(audio, this.format.encoding));
    this.utteranceBytes += audio.length;
  }

  async flush(): Promise<string> {
    const samples = concatSamples(this.utterance);
    const seconds = this.utteranceBytes / bytesPerSecond(this.format);
    this.utterance = [];
    this.utteranceBytes = 0;
    if (seconds * 1000 < WHISPER_MIN_UTTERANCE_MS) return '';
    const form = new FormData();
    const wav = encodeWav({ sampleRate: this.format.sampleRate, channels: 1, samples });
    form.append('file', new Blob([wav], { type: 'audio/wav' }), 'utterance.wav');
    form.append('model', this.settings.model ?? 'whisper-1');
    form.append('language', languageCode(this.options.language));
    form.append('response_format', 'json');
    this.secondsSent += seconds;
    let response: Response;
    try {
      response = await vendorFetch('whisper', {
        url: `${openAiBase(this.settings.credentials.base_url, OPENAI_BASE)}/v1/audio/transcriptions`,
        headers: { authorization: `Bearer ${this.settings.credentials.api_key}` },
        body: form,
        signal: this.closed.signal,
      });
    } catch (error) {
      if (this.closed.signal.aborted) return '';
      throw error;
    }
    let body: { text?: unknown };
    try {
      body = (await response.json()) as { text?: unknown };
    } catch {
      throw new ProviderError('whisper', 'protocol', 'whisper answered with something other than JSON');
    }
    if (typeof body.text !== 'string') throw new ProviderError('whisper', 'protocol', 'whisper answered without text');
    const text = body.text.trim();
    this.options.onTranscript?.(text, true);
    return text;
  }

  audioSeconds(): number {
    return this.secondsSent;
  }

  async close(): Promise<void> {
    this.closed.abort();
    this.utterance = [];
  }
}
