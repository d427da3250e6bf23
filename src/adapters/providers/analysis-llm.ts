import { createLlm, type ChatMessage } from '@switchboard/runtime';
import type { ProviderCredentials } from './provider-validator.ts';

/** What a language model answered one request, and the tokens it counted (priced per 1k). */
export interface LlmCompletion {
  text: string;
  inputTokens: number;
  outputTokens: number;
}

/**
 * One whole answer of a language model for the platform's own use (post-call analysis,
 * extensions.md §13). Implemented with the voice runtime's adapters, which speak each vendor's wire
 * protocol; bound in the composition root. Throws on refusal or failure.
 */
export interface LanguageModel {
  complete(request: {
    provider: string; model: string | null; credentials: ProviderCredentials;
    messages: Array<{ role: 'system' | 'user' | 'assistant'; content: string }>;
    timeoutMs: number;
  }): Promise<LlmCompletion>;
}

/** The runtime's streaming adapters, read to the end. */
export const runtimeLanguageModel: LanguageModel = {
  async complete({ provider, model, credentials, messages, timeoutMs }) {
    const llm = createLlm({ provider, model, credentials });
    const signal = AbortSignal.timeout(timeoutMs);
    let text = '';
    let inputTokens = 0;
    let outputTokens = 0;
    for await (const chunk of llm.stream({ model: model ?? '', messages: messages as ChatMessage[], tools: [], temperature: 0, signal })) {
      if (chunk.type === 'text') text += chunk.text;
      else if (chunk.type === 'usage') {
        inputTokens += chunk.inputTokens;
        outputTokens += chunk.outputTokens;
      }
    }
    // The adapters stop quietly when their signal aborts: a timeout is a failure here, not an answer.
    if (signal.aborted) throw new Error(`${provider} did not answer within ${timeoutMs} ms`);
    return { text, inputTokens, outputTokens };
  },
};
