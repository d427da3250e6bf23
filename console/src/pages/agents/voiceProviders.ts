import type { Schemas } from '../../api/client.ts';

/**
 * Which integrations serve an agent's speech and language settings (extensions.md §10): the
 * integration's provider is the agent's, except Whisper, served by an `openai` integration (or a
 * compatible server); `openai` integrations may serve any of the three categories.
 */
export type VoiceCategory = 'stt' | 'tts' | 'llm';
export const CATEGORY_LABEL: Record<VoiceCategory, string> = { stt: 'speech to text', tts: 'text to speech', llm: 'language model' };

const SERVES: Record<VoiceCategory, readonly string[]> = {
  stt: ['deepgram', 'assemblyai', 'openai'],
  tts: ['elevenlabs', 'cartesia', 'openai', 'azure'],
  llm: ['openai', 'groq', 'anthropic', 'google'],
};

export function integrationProviderFor(category: VoiceCategory, agentProvider: string): string {
  return category === 'stt' && agentProvider === 'whisper' ? 'openai' : agentProvider;
}

type Integration = Schemas['IntegrationSummary'];

/** The organization's integrations that could serve the agent's provider for the category, newest first. */
export function candidates(integrations: Integration[], category: VoiceCategory, agentProvider: string): Integration[] {
  const provider = integrationProviderFor(category, agentProvider);
  return integrations
    .filter((i) => i.provider === provider && (i.category === category || (SERVES[category].includes(i.provider) && ['stt', 'tts', 'llm'].includes(i.category))))
    .sort((a, b) => b.created_at.localeCompare(a.created_at));
}

/** The integration a call would use: the named one, or the newest active one of the provider. */
export function servingIntegration(integrations: Integration[], category: VoiceCategory, agentProvider: string, named: string | null | undefined): Integration | undefined {
  const list = candidates(integrations, category, agentProvider);
  if (named) return list.find((i) => i.integration_id === named);
  return list.find((i) => i.status === 'active');
}

/** Why the agent cannot take calls, one sentence per missing provider; empty when it can. */
export function readinessProblems(agent: Pick<Schemas['Agent'], 'stt_provider' | 'tts_provider' | 'llm_provider' | 'stt_integration_id' | 'tts_integration_id' | 'llm_integration_id'>, integrations: Integration[]): string[] {
  const problems: string[] = [];
  const settings: Array<[VoiceCategory, string, string | null | undefined]> = [
    ['stt', agent.stt_provider, agent.stt_integration_id], ['llm', agent.llm_provider, agent.llm_integration_id], ['tts', agent.tts_provider, agent.tts_integration_id],
  ];
  for (const [category, agentProvider, named] of settings) {
    const provider = integrationProviderFor(category, agentProvider);
    const chosen = servingIntegration(integrations, category, agentProvider, named);
    if (named && !chosen) problems.push(`Its ${CATEGORY_LABEL[category]} integration no longer exists: choose another ${provider} integration.`);
    else if (chosen && chosen.status !== 'active') problems.push(`Its ${CATEGORY_LABEL[category]} integration “${chosen.name}” was refused by ${provider}: validate it again or choose another.`);
    else if (!chosen) problems.push(`No active ${provider} integration for its ${CATEGORY_LABEL[category]} (${agentProvider}): add one on the Integrations page.`);
  }
  return problems;
}

/**
 * Well-known model and voice names per provider, offered as suggestions: the console cannot list
 * them from the providers (their list APIs need the organization's secret key, which the API never
 * returns), so any other value may be typed.
 */
export const MODEL_SUGGESTIONS: Record<string, string[]> = {
  'llm:openai': ['gpt-4o-mini', 'gpt-4o', 'gpt-4.1', 'gpt-4.1-mini', 'gpt-4.1-nano'],
  'llm:anthropic': ['claude-3-5-haiku-latest', 'claude-3-7-sonnet-latest', 'claude-sonnet-4-0'],
  'llm:groq': ['llama-3.3-70b-versatile', 'llama-3.1-8b-instant'],
  'llm:google': ['gemini-2.0-flash', 'gemini-2.5-flash', 'gemini-2.5-pro'],
  'stt:deepgram': ['nova-3', 'nova-2'],
  'stt:assemblyai': ['universal-streaming'],
  'stt:whisper': ['whisper-1', 'gpt-4o-transcribe', 'gpt-4o-mini-transcribe'],
  'tts:elevenlabs': ['eleven_flash_v2_5', 'eleven_turbo_v2_5', 'eleven_multilingual_v2'],
  'tts:cartesia': ['sonic-2', 'sonic-english'],
  'tts:openai': ['gpt-4o-mini-tts', 'tts-1', 'tts-1-hd'],
  'tts:azure': [],
};

export const VOICE_SUGGESTIONS: Record<string, string[]> = {
  elevenlabs: ['21m00Tcm4TlvDq8ikWAM', 'EXAVITQu4vr4xnSDxMaL'],
  openai: ['alloy', 'ash', 'coral', 'echo', 'fable', 'nova', 'onyx', 'sage', 'shimmer'],
  azure: ['en-US-JennyNeural', 'en-US-GuyNeural', 'en-GB-SoniaNeural', 'de-DE-KatjaNeural'],
  cartesia: [],
};

/** The `{{variables}}` named in the texts, each once, in order of first use. */
export function templateVariables(...texts: Array<string | null | undefined>): string[] {
  const names: string[] = [];
  for (const text of texts) for (const match of (text ?? '').matchAll(/\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g)) if (!names.includes(match[1]!)) names.push(match[1]!);
  return names;
}
