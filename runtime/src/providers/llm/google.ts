/**
 * Google Gemini, streamed: POST {base}/v1beta/models/{model}:streamGenerateContent?alt=sse with
 * x-goog-api-key. Function calls arrive whole (one part each); Gemini gives them no id, so one is
 * made up and the result is matched back by name.
 */
import { randomUUID } from 'node:crypto';
import { AbortedByCaller, bodyChunks, baseUrl, vendorFetch } from '../http.ts';
import { parseSse } from '../sse.ts';
import { ProviderError, type ChatMessage, type LlmChunk, type LlmProvider, type LlmRequest, type ProviderSettings } from '../types.ts';

export const GOOGLE_BASE = 'https://generativelanguage.googleapis.com';

type Part = Record<string, unknown>;
interface Content {
  role: 'user' | 'model';
  parts: Part[];
}

/** Gemini's `parameters` take an OpenAPI subset of JSON Schema: keywords outside it are refused, so they are dropped. */
const SCHEMA_KEYWORDS = new Set(['type', 'format', 'description', 'nullable', 'enum', 'properties', 'required', 'items', 'minItems', 'maxItems', 'minimum', 'maximum', 'minLength', 'maxLength', 'pattern', 'anyOf', 'title', 'default', 'propertyOrdering']);
export function toGeminiSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toGeminiSchema);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (!SCHEMA_KEYWORDS.has(key)) continue;
    if (key === 'properties' && value && typeof value === 'object') {
      out.properties = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, toGeminiSchema(sub)]));
    } else out[key] = key === 'items' || key === 'anyOf' ? toGeminiSchema(value) : value;
  }
  return out;
}

/** A tool's result as a functionResponse's `response` (an object): JSON objects as they are, anything else wrapped. */
function responseObject(content: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(content);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
    return { result: parsed };
  } catch {
    return { result: content };
  }
}

export function toGeminiContents(messages: ChatMessage[]): { system: string; contents: Content[] } {
  const system = messages.filter((message) => message.role === 'system').map((message) => message.content).join('\n\n');
  const contents: Content[] = [];
  const append = (role: Content['role'], parts: Part[]) => {
    if (parts.length === 0) return;
    const last = contents.at(-1);
    if (last && last.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };
  for (const message of messages) {
    if (message.role === 'user') append('user', message.content === '' ? [] : [{ text: message.content }]);
    else if (message.role === 'assistant') {
      const parts: Part[] = message.content === '' ? [] : [{ text: message.content }];
      for (const call of message.toolCalls ?? []) parts.push({ functionCall: { name: call.name, args: call.arguments } });
      append('model', parts);
    } else if (message.role === 'tool') append('user', [{ functionResponse: { name: message.name, response: responseObject(message.content) } }]);
  }
  return { system, contents };
}

export class GoogleLlm implements LlmProvider {
  private readonly settings: ProviderSettings;
  private readonly base: string;

  constructor(settings: ProviderSettings) {
    this.settings = settings;
    this.base = baseUrl(settings.credentials.base_url, GOOGLE_BASE);
  }

  async *stream(request: LlmRequest): AsyncGenerator<LlmChunk> {
    const model = request.model || this.settings.model || 'gemini-2.0-flash';
    const { system, contents } = toGeminiContents(request.messages);
    const generationConfig: Record<string, unknown> = { temperature: request.temperature };
    if (request.maxTokens !== undefined) generationConfig.maxOutputTokens = request.maxTokens;
    const body: Record<string, unknown> = { contents, generationConfig };
    if (system !== '') body.systemInstruction = { parts: [{ text: system }] };
    if (request.tools.length > 0) {
      body.tools = [{ functionDeclarations: request.tools.map((tool) => ({ name: tool.name, description: tool.description, parameters: toGeminiSchema(tool.parameters) })) }];
    }
    let response: Response;
    try {
      response = await vendorFetch('google', {
        url: `${this.base}/v1beta/models/${encodeURIComponent(model)}:streamGenerateContent?alt=sse`,
        headers: { 'x-goog-api-key': this.settings.credentials.api_key, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: request.signal,
        classify: (status, text) => (status === 400 && text.includes('API_KEY_INVALID') ? 'unauthorized' : undefined),
      });
    } catch (error) {
      if (error instanceof AbortedByCaller) return;
      throw error;
    }
    let usage: { promptTokenCount?: number; candidatesTokenCount?: number } | undefined;
    let finished = false;
    for await (const event of parseSse(bodyChunks('google', response, request.signal))) {
      let data: GeminiChunk;
      try {
        data = JSON.parse(event.data) as GeminiChunk;
      } catch {
        throw new ProviderError('google', 'protocol', `google sent a malformed stream event: ${event.data.slice(0, 200)}`);
      }
      if (data.error) throw new ProviderError('google', 'unavailable', `google stream error: ${data.error.message ?? 'unknown'}`);
      const candidate = data.candidates?.[0];
      for (const part of candidate?.content?.parts ?? []) {
        if (typeof part.text === 'string' && part.text !== '' && !part.thought) yield { type: 'text', text: part.text };
        if (part.functionCall) {
          yield { type: 'tool_call', call: { id: part.functionCall.id ?? `call_${randomUUID()}`, name: part.functionCall.name, arguments: part.functionCall.args ?? {} } };
        }
      }
      if (candidate?.finishReason) finished = true;
      // usageMetadata is cumulative: the last one counts.
      if (data.usageMetadata) usage = data.usageMetadata;
    }
    if (request.signal.aborted) return;
    if (!finished) throw new ProviderError('google', 'protocol', 'google stream ended without a finishReason');
    yield { type: 'usage', inputTokens: usage?.promptTokenCount ?? 0, outputTokens: usage?.candidatesTokenCount ?? 0 };
  }
}

interface GeminiChunk {
  candidates?: Array<{
    content?: { parts?: Array<{ text?: string; thought?: boolean; functionCall?: { id?: string; name: string; args?: Record<string, unknown> } }> };
    finishReason?: string;
  }>;
  usageMetadata?: { promptTokenCount?: number; candidatesTokenCount?: number };
  error?: { message?: string };
}
