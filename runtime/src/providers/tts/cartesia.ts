/**
 * Cartesia: POST {base}/tts/bytes with X-API-Key and Cartesia-Version, raw output in the leg's own
 * encoding and rate (pcm_mulaw at 8 kHz on the carrier leg).
 */
import { baseUrl, languageCode } from '../http.ts';
import { ProviderError, type AudioFormat, type ProviderSettings, type TtsProvider, type TtsRequest, type TtsResult } from '../types.ts';
import { streamAudio } from './stream.ts';

export const CARTESIA_BASE = 'https://api.cartesia.ai';
export const CARTESIA_VERSION = '2024-06-10';
const RATES = [8000, 16000, 22050, 24000, 44100, 48000];

export function cartesiaFormat(want: AudioFormat): { outputFormat: Record<string, unknown>; format: AudioFormat } {
  const sampleRate = RATES.includes(want.sampleRate) ? want.sampleRate : 16000;
  const encoding = want.encoding === 'mulaw' ? 'pcm_mulaw' : 'pcm_s16le';
  return { outputFormat: { container: 'raw', encoding, sample_rate: sampleRate }, format: { encoding: want.encoding, sampleRate } };
}

export class CartesiaTts implements TtsProvider {
  private readonly settings: ProviderSettings;
  private readonly language: string;

  constructor(settings: ProviderSettings, language: string) {
    this.settings = settings;
    this.language = language;
  }

  async synthesize(request: TtsRequest): Promise<TtsResult> {
    const voice = request.voiceId ?? this.settings.voice_id;
    // Cartesia has no default voice: an agent must name one.
    if (!voice) throw new ProviderError('cartesia', 'not_configured', 'cartesia needs the agent to have a voice_id');
    const { outputFormat, format } = cartesiaFormat(request.want);
    const base = baseUrl(this.settings.credentials.base_url, CARTESIA_BASE);
    return streamAudio(
      'cartesia',
      {
        url: `${base}/tts/bytes`,
        headers: { 'x-api-key': this.settings.credentials.api_key, 'cartesia-version': CARTESIA_VERSION, 'content-type': 'application/json' },
        body: JSON.stringify({
          model_id: request.model ?? this.settings.model ?? 'sonic-2',
          transcript: request.text,
          voice: { mode: 'id', id: voice },
          output_format: outputFormat,
          language: languageCode(this.language),
        }),
        signal: request.signal,
      },
      format,
    );
  }
}
