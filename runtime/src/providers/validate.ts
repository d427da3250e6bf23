/**
 * An integration's `validate`: one cheap authenticated request per vendor, so a wrong key or
 * address shows when the integration is added rather than on the first call.
 */
import { baseUrl, describe, openAiBase } from './http.ts';
import { ANTHROPIC_BASE, ANTHROPIC_VERSION } from './llm/anthropic.ts';
import { GOOGLE_BASE } from './llm/google.ts';
import { GROQ_BASE, OPENAI_BASE } from './llm/openai.ts';
import { DEEPGRAM_BASE } from './stt/deepgram.ts';
import { azureBase } from './tts/azure.ts';
import { CARTESIA_BASE, CARTESIA_VERSION } from './tts/cartesia.ts';
import { ELEVENLABS_BASE } from './tts/elevenlabs.ts';
import { ProviderError, type ProviderSettings } from './types.ts';

export const ASSEMBLYAI_API_BASE = 'https://api.assemblyai.com';

export interface ProviderCredentials {
  api_key: string;
  base_url?: string | null;
  region?: string | null;
}

export interface ValidationResult {
  ok: boolean;
  detail: string;
}

function check(provider: string, credentials: ProviderCredentials): { url: string; headers: Record<string, string> } {
  const key = credentials.api_key;
  switch (provider) {
    case 'deepgram':
      return { url: `${baseUrl(credentials.base_url, DEEPGRAM_BASE)}/v1/projects`, headers: { authorization: `Token ${key}` } };
    case 'assemblyai':
      return { url: `${baseUrl(credentials.base_url, ASSEMBLYAI_API_BASE)}/v2/transcript?limit=1`, headers: { authorization: key } };
    case 'openai':
    case 'whisper':
      return { url: `${openAiBase(credentials.base_url, OPENAI_BASE)}/v1/models`, headers: { authorization: `Bearer ${key}` } };
    case 'groq':
      return { url: `${openAiBase(credentials.base_url, GROQ_BASE)}/v1/models`, headers: { authorization: `Bearer ${key}` } };
    case 'elevenlabs':
      return { url: `${baseUrl(credentials.base_url, ELEVENLABS_BASE)}/v1/user`, headers: { 'xi-api-key': key } };
    case 'cartesia':
      return { url: `${baseUrl(credentials.base_url, CARTESIA_BASE)}/voices`, headers: { 'x-api-key': key, 'cartesia-version': CARTESIA_VERSION } };
    case 'azure': {
      const settings: ProviderSettings = { provider, model: null, credentials };
      return { url: `${azureBase(settings, 'tts')}/cognitiveservices/voices/list`, headers: { 'ocp-apim-subscription-key': key } };
    }
    case 'anthropic':
      return { url: `${baseUrl(credentials.base_url, ANTHROPIC_BASE)}/v1/models`, headers: { 'x-api-key': key, 'anthropic-version': ANTHROPIC_VERSION } };
    case 'google':
      return { url: `${baseUrl(credentials.base_url, GOOGLE_BASE)}/v1beta/models`, headers: { 'x-goog-api-key': key } };
    default:
      throw new ProviderError(provider, 'not_configured', `no adapter for provider "${provider}"`);
  }
}

/** Never throws: `{ok: false, detail}` says what went wrong (refused key, unreachable address, unknown provider). */
export async function validateProvider(provider: string, credentials: ProviderCredentials, timeoutMs = 10_000): Promise<ValidationResult> {
  if (!credentials?.api_key) return { ok: false, detail: 'api_key is missing' };
  let request: { url: string; headers: Record<string, string> };
  try {
    request = check(provider, credentials);
  } catch (error) {
    return { ok: false, detail: error instanceof Error ? error.message : String(error) };
  }
  try {
    const response = await fetch(request.url, { headers: request.headers, signal: AbortSignal.timeout(timeoutMs) });
    await response.body?.cancel();
    if (response.ok) return { ok: true, detail: `${provider} accepted the credentials (HTTP ${response.status})` };
    const reason = response.status === 401 || response.status === 403 ? 'refused the credentials' : 'answered with an error';
    return { ok: false, detail: `${provider} ${reason} (HTTP ${response.status})` };
  } catch (error) {
    return { ok: false, detail: `${provider} unreachable: ${describe(error)}` };
  }
}
