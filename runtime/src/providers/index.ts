/** The agent's provider settings → the adapters that speak to those vendors. */
import { AnthropicLlm } from './llm/anthropic.ts';
import { GoogleLlm } from './llm/google.ts';
import { OpenAiLlm } from './llm/openai.ts';
import { AssemblyAiStt } from './stt/assemblyai.ts';
import { DeepgramStt, type StreamingSttTuning } from './stt/deepgram.ts';
import { WhisperStt } from './stt/whisper.ts';
import { AzureTts } from './tts/azure.ts';
import { CartesiaTts } from './tts/cartesia.ts';
import { ElevenLabsTts } from './tts/elevenlabs.ts';
import { OpenAiTts } from './tts/openai.ts';
import { ProviderError, type LlmProvider, type ProviderSettings, type Providers, type SttProvider, type TtsProvider } from './types.ts';

export const STT_PROVIDERS = ['deepgram', 'assemblyai', 'whisper'] as const;
export const TTS_PROVIDERS = ['elevenlabs', 'cartesia', 'openai', 'azure'] as const;
export const LLM_PROVIDERS = ['openai', 'groq', 'anthropic', 'google'] as const;

function requireKey(settings: ProviderSettings): void {
  if (!settings.credentials?.api_key) throw new ProviderError(settings.provider, 'not_configured', `${settings.provider} has no api_key`);
}

export function createStt(settings: ProviderSettings, tuning: StreamingSttTuning = {}): SttProvider {
  requireKey(settings);
  switch (settings.provider) {
    case 'deepgram':
      return new DeepgramStt(settings, tuning);
    case 'assemblyai':
      return new AssemblyAiStt(settings, tuning);
    case 'whisper':
      return new WhisperStt(settings);
    default:
      throw new ProviderError(settings.provider, 'not_configured', `no speech-to-text adapter for "${settings.provider}"`);
  }
}

export function createTts(settings: ProviderSettings, language: string): TtsProvider {
  requireKey(settings);
  switch (settings.provider) {
    case 'elevenlabs':
      return new ElevenLabsTts(settings, language);
    case 'cartesia':
      return new CartesiaTts(settings, language);
    case 'openai':
      return new OpenAiTts(settings);
    case 'azure':
      return new AzureTts(settings, language);
    default:
      throw new ProviderError(settings.provider, 'not_configured', `no text-to-speech adapter for "${settings.provider}"`);
  }
}

export function createLlm(settings: ProviderSettings): LlmProvider {
  requireKey(settings);
  switch (settings.provider) {
    case 'openai':
    case 'groq':
      return new OpenAiLlm(settings.provider, settings);
    case 'anthropic':
      return new AnthropicLlm(settings);
    case 'google':
      return new GoogleLlm(settings);
    default:
      throw new ProviderError(settings.provider, 'not_configured', `no language-model adapter for "${settings.provider}"`);
  }
}

/** The three adapters of a call; throws ProviderError `not_configured` for a provider without an adapter or a key. */
export function createProviders(settings: { stt: ProviderSettings; tts: ProviderSettings; llm: ProviderSettings }, language: string): Providers {
  return { stt: createStt(settings.stt), tts: createTts(settings.tts, language), llm: createLlm(settings.llm) };
}
