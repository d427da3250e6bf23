/**
 * A cheap authenticated request per provider, for an integration's `validate`: a list of models,
 * the user or the projects, which needs a valid key and costs nothing. `base_url` replaces the
 * vendor's address (a compatible server, or a stand-in in tests).
 */
export interface ProviderCredentialsInput {
  api_key: string;
  base_url?: string | null;
  region?: string | null;
}

interface Probe {
  url: string;
  headers: Record<string, string>;
}

const TIMEOUT_MS = 10_000;

function probeFor(provider: string, c: ProviderCredentialsInput): Probe | undefined {
  const base = (fallback: string) => (c.base_url || fallback).replace(/\/+$/, '');
  switch (provider) {
    case 'openai': return { url: `${base('https://api.openai.com')}/v1/models`, headers: { authorization: `Bearer ${c.api_key}` } };
    case 'groq': return { url: `${base('https://api.groq.com/openai')}/v1/models`, headers: { authorization: `Bearer ${c.api_key}` } };
    case 'deepgram': return { url: `${base('https://api.deepgram.com')}/v1/projects`, headers: { authorization: `Token ${c.api_key}` } };
    case 'assemblyai': return { url: `${base('https://api.assemblyai.com')}/v2/transcript?limit=1`, headers: { authorization: c.api_key } };
    case 'elevenlabs': return { url: `${base('https://api.elevenlabs.io')}/v1/user`, headers: { 'xi-api-key': c.api_key } };
    case 'cartesia': return { url: `${base('https://api.cartesia.ai')}/voices?limit=1`, headers: { 'x-api-key': c.api_key, 'cartesia-version': '2024-11-13' } };
    case 'anthropic': return { url: `${base('https://api.anthropic.com')}/v1/models`, headers: { 'x-api-key': c.api_key, 'anthropic-version': '2023-06-01' } };
    case 'google': return { url: `${base('https://generativelanguage.googleapis.com')}/v1beta/models?pageSize=1`, headers: { 'x-goog-api-key': c.api_key } };
    case 'azure': {
      const fallback = c.region ? `https://${c.region}.tts.speech.microsoft.com` : '';
      if (!c.base_url && !fallback) return undefined;
      return { url: `${base(fallback)}/cognitiveservices/voices/list`, headers: { 'ocp-apim-subscription-key': c.api_key } };
    }
    default: return undefined;
  }
}

export async function validateProvider(provider: string, credentials: ProviderCredentialsInput): Promise<{ ok: boolean; detail: string }> {
  const probe = probeFor(provider, credentials);
  if (!probe) return { ok: false, detail: provider === 'azure' ? 'azure needs a region or a base_url' : `unknown provider ${provider}` };
  try {
    const res = await fetch(probe.url, { headers: probe.headers, signal: AbortSignal.timeout(TIMEOUT_MS), redirect: 'manual' });
    await res.body?.cancel();
    if (res.ok) return { ok: true, detail: `${provider} accepted the key` };
    if (res.status === 401 || res.status === 403) return { ok: false, detail: `${provider} refused the key (HTTP ${res.status})` };
    return { ok: false, detail: `${provider} answered HTTP ${res.status}` };
  } catch (err) {
    return { ok: false, detail: `${provider} did not answer: ${(err as Error).message}` };
  }
}
