/**
 * Anthropic Messages, streamed (SSE), with tools. POST {base}/v1/messages, x-api-key,
 * anthropic-version: 2023-06-01. The system prompt travels apart from the messages; tool calls are
 * `tool_use` blocks whose input streams as `input_json_delta` pieces; results go back as
 * `tool_result` blocks in a user message.
 */
import { AbortedByCaller, bodyChunks, baseUrl, vendorFetch } from '../http.ts';
import { parseSse } from '../sse.ts';
import { ProviderError, type ChatMessage, type LlmChunk, type LlmProvider, type LlmRequest, type ProviderSettings } from '../types.ts';
import { parseArguments } from './tool-arguments.ts';

export const ANTHROPIC_BASE = 'https://api.anthropic.com';
export const ANTHROPIC_VERSION = '2023-06-01';

type Block = Record<string, unknown>;
interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: Block[];
}

export function toAnthropicMessages(messages: ChatMessage[]): { system: string; messages: AnthropicMessage[] } {
  const system = messages.filter((message) => message.role === 'system').map((message) => message.content).join('\n\n');
  const out: AnthropicMessage[] = [];
  const append = (role: AnthropicMessage['role'], blocks: Block[]) => {
    if (blocks.length === 0) return;
    const last = out.at(-1);
    // Consecutive turns of one role become one message: several tool results answer one assistant turn together.
    if (last && last.role === role) last.content.push(...blocks);
    else out.push({ role, content: blocks });
  };
  for (const message of messages) {
    if (message.role === 'user') append('user', message.content === '' ? [] : [{ type: 'text', text: message.content }]);
    else if (message.role === 'assistant') {
      const blocks: Block[] = message.content === '' ? [] : [{ type: 'text', text: message.content }];
      for (const call of message.toolCalls ?? []) blocks.push({ type: 'tool_use', id: call.id, name: call.name, input: call.arguments });
      append('assistant', blocks);
    } else if (message.role === 'tool') append('user', [{ type: 'tool_result', tool_use_id: message.toolCallId, content: message.content }]);
  }
  // The conversation must open with the user; an agent that greets first opens with its greeting.
  if (out[0]?.role === 'assistant') out.unshift({ role: 'user', content: [{ type: 'text', text: '(The call is connected.)' }] });
  return { system, messages: out };
}

export class AnthropicLlm implements LlmProvider {
  private readonly settings: ProviderSettings;
  private readonly base: string;

  constructor(settings: ProviderSettings) {
    this.settings = settings;
    this.base = baseUrl(settings.credentials.base_url, ANTHROPIC_BASE);
  }

  async *stream(request: LlmRequest): AsyncGenerator<LlmChunk> {
    const { system, messages } = toAnthropicMessages(request.messages);
    const body: Record<string, unknown> = {
      model: request.model || this.settings.model || 'claude-3-5-haiku-latest',
      max_tokens: request.maxTokens ?? 1024, // required by the API
      messages,
      stream: true,
      temperature: request.temperature,
    };
    if (system !== '') body.system = system;
    if (request.tools.length > 0) body.tools = request.tools.map((tool) => ({ name: tool.name, description: tool.description, input_schema: tool.parameters }));
    let response: Response;
    try {
      response = await vendorFetch('anthropic', {
        url: `${this.base}/v1/messages`,
        headers: { 'x-api-key': this.settings.credentials.api_key, 'anthropic-version': ANTHROPIC_VERSION, 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify(body),
        signal: request.signal,
      });
    } catch (error) {
      if (error instanceof AbortedByCaller) return;
      throw error;
    }
    const toolBlocks = new Map<number, { id: string; name: string; json: string }>();
    let inputTokens = 0;
    let outputTokens = 0;
    let stopped = false;
    for await (const event of parseSse(bodyChunks('anthropic', response, request.signal))) {
      let data: AnthropicEvent;
      try {
        data = JSON.parse(event.data) as AnthropicEvent;
      } catch {
        throw new ProviderError('anthropic', 'protocol', `anthropic sent a malformed stream event: ${event.data.slice(0, 200)}`);
      }
      switch (data.type) {
        case 'message_start':
          inputTokens = data.message?.usage?.input_tokens ?? 0;
          outputTokens = data.message?.usage?.output_tokens ?? 0;
          break;
        case 'content_block_start':
          if (data.content_block?.type === 'tool_use') toolBlocks.set(data.index ?? 0, { id: data.content_block.id ?? '', name: data.content_block.name ?? '', json: '' });
          break;
        case 'content_block_delta':
          if (data.delta?.type === 'text_delta' && data.delta.text) yield { type: 'text', text: data.delta.text };
          else if (data.delta?.type === 'input_json_delta') {
            const block = toolBlocks.get(data.index ?? 0);
            if (block) block.json += data.delta.partial_json ?? '';
          }
          break;
        case 'content_block_stop': {
          const block = toolBlocks.get(data.index ?? 0);
          if (block) {
            toolBlocks.delete(data.index ?? 0);
            yield { type: 'tool_call', call: { id: block.id, name: block.name, arguments: parseArguments('anthropic', block.name, block.json) } };
          }
          break;
        }
        case 'message_delta':
          if (data.usage?.output_tokens !== undefined) outputTokens = data.usage.output_tokens;
          break;
        case 'message_stop':
          stopped = true;
          break;
        case 'error':
          throw new ProviderError('anthropic', data.error?.type === 'overloaded_error' ? 'unavailable' : 'protocol', `anthropic stream error: ${data.error?.message ?? 'unknown'}`);
        default:
          break; // ping and future event types
      }
      if (stopped) break;
    }
    if (request.signal.aborted) return;
    if (!stopped) throw new ProviderError('anthropic', 'protocol', 'anthropic stream ended without message_stop');
    yield { type: 'usage', inputTokens, outputTokens };
  }
}

interface AnthropicEvent {
  type: string;
  index?: number;
  message?: { usage?: { input_tokens?: number; output_tokens?: number } };
  content_block?: { type: string; id?: string; name?: string };
  delta?: { type?: string; text?: string; partial_json?: string; stop_reason?: string };
  usage?: { output_tokens?: number };
  error?: { type?: string; message?: string };
}
