/** Anthropic Messages stand-in: POST /v1/messages, streamed SSE events exactly as the API names them. */
import type { ServerResponse } from 'node:http';
import { HttpStandin, fragments, textPieces, type RecordedRequest } from './http-standin.ts';
import { LlmScript, countTokens, type LlmStandinOptions } from './llm-script.ts';

export class AnthropicStandin extends HttpStandin {
  readonly options: LlmStandinOptions;
  readonly script: LlmScript;
  /** The usage each answer reported: [input, output]. */
  readonly usage: Array<[number, number]> = [];

  constructor(options: LlmStandinOptions) {
    super();
    this.options = options;
    this.script = new LlmScript(options.script ?? []);
  }

  protected async handle(request: RecordedRequest, response: ServerResponse, dropMid: boolean): Promise<void> {
    const error = (status: number, type: string, message: string) => this.reply(response, status, JSON.stringify({ type: 'error', error: { type, message } }));
    if (request.path === '/v1/models' && request.method === 'GET') {
      if (request.headers['x-api-key'] !== this.options.key) return error(401, 'authentication_error', 'invalid x-api-key');
      return this.reply(response, 200, JSON.stringify({ data: [{ id: 'claude-test', type: 'model' }], has_more: false }));
    }
    if (request.path !== '/v1/messages' || request.method !== 'POST') return error(404, 'not_found_error', 'not found');
    if (request.headers['x-api-key'] !== this.options.key) return error(401, 'authentication_error', 'invalid x-api-key');
    if (request.headers['anthropic-version'] !== '2023-06-01') return error(400, 'invalid_request_error', 'anthropic-version header is required');
    const body = request.json;
    if (!body || typeof body.model !== 'string' || typeof body.max_tokens !== 'number' || !Array.isArray(body.messages)) return error(400, 'invalid_request_error', 'model, max_tokens and messages are required');
    if (body.stream !== true) return error(400, 'invalid_request_error', 'the stand-in only streams');
    const messages = body.messages as Array<{ role: string; content: unknown }>;
    if (messages.some((message) => message.role !== 'user' && message.role !== 'assistant')) return error(400, 'invalid_request_error', 'messages: roles must be user or assistant (system goes in `system`)');
    if (messages[0]?.role !== 'user') return error(400, 'invalid_request_error', 'messages: first message must use the "user" role');
    const blocks = messages.flatMap((message) => (Array.isArray(message.content) ? (message.content as Array<Record<string, any>>).map((block) => ({ role: message.role, block })) : []));
    const view = {
      toolNames: Array.isArray(body.tools) ? body.tools.filter((tool: any) => tool.input_schema && typeof tool.name === 'string').map((tool: any) => tool.name) : [],
      toolResultIds: blocks.filter(({ role, block }) => role === 'user' && block.type === 'tool_result').map(({ block }) => block.tool_use_id),
      assistantCallIds: blocks.filter(({ role, block }) => role === 'assistant' && block.type === 'tool_use' && block.input && typeof block.input === 'object').map(({ block }) => block.id),
    };
    const refusal = this.script.check(view, this.script.peek());
    if (refusal) return error(400, 'invalid_request_error', refusal);
    const { turn, callId } = this.script.take();
    const inputTokens = countTokens(JSON.stringify(body.messages) + (body.system ?? ''));
    const events: Array<[string, unknown]> = [['message_start', { type: 'message_start', message: { id: 'msg_standin', type: 'message', role: 'assistant', content: [], model: body.model, stop_reason: null, usage: { input_tokens: inputTokens, output_tokens: 1 } } }], ['ping', { type: 'ping' }]];
    let index = 0;
    let outputText = '';
    if (turn.text) {
      events.push(['content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } }]);
      for (const piece of textPieces(turn.text)) events.push(['content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } }]);
      events.push(['content_block_stop', { type: 'content_block_stop', index }]);
      outputText += turn.text;
      index++;
    }
    if ('toolCall' in turn) {
      const json = JSON.stringify(turn.toolCall.arguments);
      events.push(['content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: callId, name: turn.toolCall.name, input: {} } }]);
      for (const piece of fragments(json, 3)) events.push(['content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: piece } }]);
      events.push(['content_block_stop', { type: 'content_block_stop', index }]);
      outputText += json;
    }
    const outputTokens = countTokens(outputText);
    this.usage.push([inputTokens, outputTokens]);
    events.push(['message_delta', { type: 'message_delta', delta: { stop_reason: 'toolCall' in turn ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { output_tokens: outputTokens } }]);
    events.push(['message_stop', { type: 'message_stop' }]);
    const chunks = events.map(([name, data]) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
    await this.stream(response, 'text/event-stream', chunks, this.options.firstTokenMs ?? 0, this.options.gapMs ?? 5, dropMid);
  }
}
