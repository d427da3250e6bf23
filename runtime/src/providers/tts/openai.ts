/**
 * OpenAI speech (or any OpenAI-compatible TTS server): POST {base}/v1/audio/speech with
 * response_format "pcm", which is 24 kHz 16-bit mono PCM; the engine resamples it for the leg.
 */
import { openAiBase } from '../http.ts';
import type { AudioFormat, ProviderSettings, TtsProvider, TtsRequest, TtsResult } from '../types.ts';
import { OPENAI_BASE } from '../llm/openai.ts';
import { streamAudio } from './stream.ts';

export const OPENAI_TTS_FORMAT: AudioFormat = { encoding: 'pcm16', sampleRate: 24000 };

export class OpenAiTts implements TtsProvider {
  private readonly settings: ProviderSettings;

  constructor(settings: ProviderSettings) {
    this.settings = settings;
  }

  synthesize(request: TtsRequest): Promise<TtsResult> {
    const base = openAiBase(this.settings.credentials.base_url, OPENAI_BASE);
    return streamAudio(
      'openai',
      {
        url: `${base}/v1/audio/speech`,
        headers: { authorization: `Bearer ${this.settings.credentials.api_key}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          model: request.model ?? this.settings.model ?? 'gpt-4o-mini-tts',
          voice: request.voiceId ?? this.settings.voice_id ?? 'alloy',
          input: request.text,
          response_format: 'pcm',
        }),
        signal: request.signal,
      },
      OPENAI_TTS_FORMAT,
    );
  }
}
