/**
 * Azure AI Speech: POST https://{region}.tts.speech.microsoft.com/cognitiveservices/v1 with an SSML
 * body, Ocp-Apim-Subscription-Key and X-Microsoft-OutputFormat (raw 8 kHz μ-law on the carrier leg).
 */
import { baseUrl, languageTag } from '../http.ts';
import { ProviderError, type AudioFormat, type ProviderSettings, type TtsProvider, type TtsRequest, type TtsResult } from '../types.ts';
import { streamAudio } from './stream.ts';

export const AZURE_DEFAULT_VOICE = 'en-US-JennyNeural';

export function azureFormat(want: AudioFormat): { outputFormat: string; format: AudioFormat } {
  if (want.encoding === 'mulaw' && want.sampleRate === 8000) return { outputFormat: 'raw-8khz-8bit-mono-mulaw', format: want };
  const rate = [8000, 16000, 24000, 48000].includes(want.sampleRate) ? want.sampleRate : 16000;
  return { outputFormat: `raw-${rate / 1000}khz-16bit-mono-pcm`, format: { encoding: 'pcm16', sampleRate: rate } };
}

export function escapeXml(text: string): string {
  return text.replace(/[<>&'"]/g, (char) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[char]!);
}

export function azureBase(settings: ProviderSettings, service: 'tts' | 'api'): string {
  const region = settings.credentials.region;
  if (!settings.credentials.base_url && !region) throw new ProviderError('azure', 'not_configured', 'azure needs a region in its credentials');
  const host = service === 'tts' ? `https://${region}.tts.speech.microsoft.com` : `https://${region}.api.cognitive.microsoft.com`;
  return baseUrl(settings.credentials.base_url, host);
}

export class AzureTts implements TtsProvider {
  private readonly settings: ProviderSettings;
  private readonly language: string;

  constructor(settings: ProviderSettings, language: string) {
    this.settings = settings;
    this.language = language;
  }

  async synthesize(request: TtsRequest): Promise<TtsResult> {
    const { outputFormat, format } = azureFormat(request.want);
    const voice = request.voiceId ?? this.settings.voice_id ?? AZURE_DEFAULT_VOICE;
    const lang = languageTag(this.language.includes('-') ? this.language : voice.split('-').slice(0, 2).join('-'));
    const ssml = `<speak version='1.0' xml:lang='${escapeXml(lang)}'><voice name='${escapeXml(voice)}'>${escapeXml(request.text)}</voice></speak>`;
    return streamAudio(
      'azure',
      {
        url: `${azureBase(this.settings, 'tts')}/cognitiveservices/v1`,
        headers: {
          'ocp-apim-subscription-key': this.settings.credentials.api_key,
          'content-type': 'application/ssml+xml',
          'x-microsoft-outputformat': outputFormat,
          'user-agent': 'switchboard-runtime',
        },
        body: ssml,
        signal: request.signal,
      },
      format,
    );
  }
}
