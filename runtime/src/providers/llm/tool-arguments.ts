import { ProviderError } from '../types.ts';

/** A tool call's streamed arguments, joined, as an object ('' means no arguments). */
export function parseArguments(provider: string, name: string, text: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ProviderError(provider, 'protocol', `${provider} sent unparsable arguments for tool ${name}: ${text.slice(0, 200)}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ProviderError(provider, 'protocol', `${provider} sent arguments for tool ${name} that are not an object`);
  }
  return parsed as Record<string, unknown>;
}
