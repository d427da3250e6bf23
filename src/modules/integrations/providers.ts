/**
 * Which integration serves which agent setting (extensions.md §10). Speech and language providers
 * are integrations of category stt, tts or llm; one `openai` integration may serve all three.
 */
export const VOICE_CATEGORIES = ['stt', 'tts', 'llm'] as const;
export type VoiceCategory = (typeof VOICE_CATEGORIES)[number];

export const PROVIDERS_BY_CATEGORY: Readonly<Record<VoiceCategory, readonly string[]>> = {
  stt: ['deepgram', 'assemblyai', 'openai'],
  tts: ['elevenlabs', 'cartesia', 'openai', 'azure'],
  llm: ['openai', 'groq', 'anthropic', 'google'],
};

export const VOICE_PROVIDERS = ['deepgram', 'assemblyai', 'openai', 'elevenlabs', 'cartesia', 'azure', 'groq', 'anthropic', 'google'] as const;

/** The integration provider serving an agent's provider setting: whisper is OpenAI's (or a compatible server's) transcription. */
export function integrationProviderFor(category: VoiceCategory, agentProvider: string): string {
  return category === 'stt' && agentProvider === 'whisper' ? 'openai' : agentProvider;
}

/** Whether an integration may serve the category: its own, or any of them for a provider serving several (openai). */
export function servesCategory(integration: { provider: string; category: string }, category: VoiceCategory): boolean {
  if (integration.category === category) return true;
  return (VOICE_CATEGORIES as readonly string[]).includes(integration.category) && PROVIDERS_BY_CATEGORY[category].includes(integration.provider);
}
