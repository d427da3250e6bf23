/**
 * OpenAI Chat Completions, streamed (SSE), with function tools; Groq and any OpenAI-compatible
 * server (vLLM, llama.cpp, Ollama…) speak the same protocol at another base.
 * POST {base}/v1/chat/completions, Authorization: Bearer KEY.
 */
import { AbortedByCaller, bodyChunks, openAiBase, vendorFetch } from '../http.ts';
import { parseSse } from '../sse.ts';
import { ProviderError, type ChatMessage, type LlmChunk, type LlmProvider, type LlmRequest, type ProviderSettings, type ToolCall } from '../types.ts';
import { parseArguments } from './tool-arguments.ts';

export const OPENAI_BASE = 'https://api.openai.com';
export const GROQ_BASE = 'https://api.groq.com/openai';

export function toOpenAiMessages(messages: ChatMessage[]): unknown[] {
  return messages.map((message) => {
    switch (message.role) {
      case 'system':
      case 'user':
        return { role: message.role, content: message.content };
      case 'assistant':
        return message.toolCalls && message.toolCalls.length > 0
          ? {
              role: 'assistant',
              content: message.content === '' ? null : message.content,
              tool_calls: message.toolCalls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.arguments) } })),
            }
          : { role: 'assistant', content: message.content };
      case 'tool':
        return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
    }
  });
}

interface PartialCall {
  id: string;
  name: string;
  arguments: string;
}

export class OpenAiLlm implements LlmProvider {
  private readonly provider: string;
  private readonly settings: ProviderSettings;
  private readonly base: string;
  private readonly vendorHosted: boolean;

  constructor(provider: 'openai' | 'groq', settings: ProviderSettings) {
    this.provider = provider;
    this.settings = settings;
    this.vendorHosted = !settings.credentials.base_url;
    this.base = openAiBase(settings.credentials.base_url, provider === 'groq' ? GROQ_BASE : OPENAI_BASE);
  }

  async *stream(request: LlmRequest): AsyncGenerator<LlmChunk> {
    const body: Record<string, unknown> = {
      model: request.model || this.settings.model || (this.provider === 'groq' ? 'llama-3.3-70b-versatile' : 'gpt-4o-mini'),
      messages: toOpenAiMessages(request.messages),
      stream: true,
      stream_options: { include_usage: true },
      temperature: request.temperature,
    };
    // The vendors now name the limit max_completion_tokens; self-hosted servers widely know only max_tokens.
    if (request.maxTokens !== undefined) body[this.vendorHosted ? 'max_completion_tokens' : 'max_tokens'] = request.maxTokens;
    // An empty `tools` array is refused by OpenAI: leave it out when the agent has none.
    if (request.tools.length > 0) {
      body.tools = request.tools.map((tool) => ({ type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.parameters } }));
    }
    let response: Response;
    try {
      response = await vendorFetch(this.provider, {
        url: `${this.base}/v1/chat/completions`,
        headers: { authorization: `Bearer ${this.settings.credentials.api_key}`, 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify(body),
        signal: request.signal,
      });
    } catch (error) {
      if (error instanceof AbortedByCaller) return;
      throw error;
    }
    const calls = new Map<number, PartialCall>();
    let done = false;
    const flushCalls = function* (provider: string): Generator<LlmChunk> {
      for (const [, call] of [...calls.entries()].sort(([a], [b]) => a - b)) {
        yield { type: 'tool_call', call: { id: call.id, name: call.name, arguments: parseArguments(provider, call.name, call.arguments) } satisfies ToolCall };
      }
      calls.clear();
    };
    for await (const event of parseSse(bodyChunks(this.provider, response, request.signal))) {
      if (event.data === '[DONE]') {
        done = true;
        break;
      }
      let chunk: OpenAiStreamChunk;
      try {
        chunk = JSON.parse(event.data) as OpenAiStreamChunk;
      } catch {
        throw new ProviderError(this.provider, 'protocol', `${this.provider} sent a malformed stream event: ${event.data.slice(0, 200)}`);
      }
      if (chunk.error) throw new ProviderError(this.provider, 'unavailable', `${this.provider} stream error: ${chunk.error.message ?? JSON.stringify(chunk.error)}`);
      for (const choice of chunk.choices ?? []) {
        const delta = choice.delta ?? {};
        if (typeof delta.content === 'string' && delta.content !== '') yield { type: 'text', text: delta.content };
        for (const piece of delta.tool_calls ?? []) {
          const index = piece.index ?? 0;
          let call = calls.get(index);
          if (!call) {
            call = { id: '', name: '', arguments: '' };
            calls.set(index, call);
          }
          if (piece.id) call.id = piece.id;
          if (piece.function?.name) call.name += piece.function.name;
          if (piece.function?.arguments) call.arguments += piece.function.arguments;
        }
        if (choice.finish_reason) yield* flushCalls(this.provider);
      }
      const usage = chunk.usage ?? chunk.x_groq?.usage;
      if (usage) yield { type: 'usage', inputTokens: usage.prompt_tokens ?? 0, outputTokens: usage.completion_tokens ?? 0 };
    }
    if (request.signal.aborted) return;
    if (!done) throw new ProviderError(this.provider, 'protocol', `${this.provider} stream ended without [DONE]`);
    yield* flushCalls(this.provider);
  }
}

interface OpenAiStreamChunk {
  choices?: Array<{
    delta?: { content?: string | null; tool_calls?: Array<{ index?: number; id?: string; function?: { name?: string; arguments?: string } }> };
    finish_reason?: string | null;
  }>;
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
  x_groq?: { usage?: { prompt_tokens?: number; completion_tokens?: number } };
  error?: { message?: string };
}
