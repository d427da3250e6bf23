/**
 * ElevenLabs: POST {base}/v1/text-to-speech/{voice_id}/stream?output_format=…, xi-api-key. The
 * carrier leg asks for ulaw_8000 (no conversion at all); PCM legs for pcm_{rate} where offered.
 */
import { baseUrl, languageCode } from '../http.ts';
import type { AudioFormat, ProviderSettings, TtsProvider, TtsRequest, TtsResult } from '../types.ts';
import { streamAudio } from './stream.ts';

export const ELEVENLABS_BASE = 'https://api.elevenlabs.io';
/** A voice of ElevenLabs' default library ("Rachel"), for agents that name none. */
export const ELEVENLABS_DEFAULT_VOICE = '21m00Tcm4TlvDq8ikWAM';
const PCM_RATES = [8000, 16000, 22050, 24000, 44100];

export function elevenLabsFormat(want: AudioFormat): { outputFormat: string; format: AudioFormat } {
  if (want.encoding === 'mulaw' && want.sampleRate === 8000) return { outputFormat: 'ulaw_8000', format: want };
  const rate = PCM_RATES.includes(want.sampleRate) ? want.sampleRate : 16000;
  return { outputFormat: `pcm_${rate}`, format: { encoding: 'pcm16', sampleRate: rate } };
}

export class ElevenLabsTts implements TtsProvider {
  private readonly settings: ProviderSettings;
  private readonly language: string;

  constructor(settings: ProviderSettings, language: string) {
    this.settings = settings;
    this.language = language;
  }

  synthesize(request: TtsRequest): Promise<TtsResult> {
    const { outputFormat, format } = elevenLabsFormat(request.want);
    const voice = request.voiceId ?? this.settings.voice_id ?? ELEVENLABS_DEFAULT_VOICE;
    const model = request.model ?? this.settings.model ?? 'eleven_flash_v2_5';
    const body: Record<string, unknown> = { text: request.text, model_id: model };
    // Only the multilingual turbo/flash v2.5 models accept a language code; the others infer it.
    if (/v2_5/.test(model)) body.language_code = languageCode(this.language);
    const base = baseUrl(this.settings.credentials.base_url, ELEVENLABS_BASE);
    return streamAudio(
      'elevenlabs',
      {
        url: `${base}/v1/text-to-speech/${encodeURIComponent(voice)}/stream?output_format=${outputFormat}`,
        headers: { 'xi-api-key': this.settings.credentials.api_key, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: request.signal,
      },
      format,
    );
  }
}
