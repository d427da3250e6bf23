/** Gemini stand-in: POST /v1beta/models/{model}:streamGenerateContent?alt=sse, key in x-goog-api-key. */
import type { ServerResponse } from 'node:http';
import { HttpStandin, textPieces, type RecordedRequest } from './http-standin.ts';
import { LlmScript, countTokens, type LlmStandinOptions } from './llm-script.ts';

export class GoogleStandin extends HttpStandin {
  readonly options: LlmStandinOptions;
  readonly script: LlmScript;
  readonly usage: Array<[number, number]> = [];

  constructor(options: LlmStandinOptions) {
    super();
    this.options = options;
    this.script = new LlmScript(options.script ?? []);
  }

  protected async handle(request: RecordedRequest, response: ServerResponse, dropMid: boolean): Promise<void> {
    const error = (status: number, statusName: string, message: string, reason?: string) =>
      this.reply(response, status, JSON.stringify({ error: { code: status, message, status: statusName, ...(reason ? { details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason }] } : {}) } }));
    const key = request.headers['x-goog-api-key'];
    // Google's own answers: no key is 403 PERMISSION_DENIED, a wrong key 400 API_KEY_INVALID.
    if (key === undefined) return error(403, 'PERMISSION_DENIED', 'Method doesn\'t allow unregistered callers');
    if (key !== this.options.key) return error(400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', 'API_KEY_INVALID');
    if (request.path === '/v1beta/models' && request.method === 'GET') return this.reply(response, 200, JSON.stringify({ models: [{ name: 'models/gemini-test' }] }));
    const match = /^\/v1beta\/models\/([^/:]+):streamGenerateContent$/.exec(request.path);
    if (!match || request.method !== 'POST') return error(404, 'NOT_FOUND', 'not found');
    if (request.query.get('alt') !== 'sse') return error(400, 'INVALID_ARGUMENT', 'the stand-in only answers alt=sse');
    const body = request.json;
    if (!body || !Array.isArray(body.contents)) return error(400, 'INVALID_ARGUMENT', 'contents is required');
    const contents = body.contents as Array<{ role: string; parts: Array<Record<string, any>> }>;
    if (contents.some((content) => content.role !== 'user' && content.role !== 'model')) return error(400, 'INVALID_ARGUMENT', 'role must be user or model');
    const parts = contents.flatMap((content) => content.parts.map((part) => ({ role: content.role, part })));
    const declarations = (body.tools ?? []).flatMap((tool: any) => tool.functionDeclarations ?? []);
    if (declarations.some((declaration: any) => JSON.stringify(declaration.parameters ?? {}).includes('additionalProperties'))) {
      return error(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received. Unknown name "additionalProperties"');
    }
    const view = {
      toolNames: declarations.map((declaration: any) => declaration.name),
      toolResultIds: parts.filter(({ role, part }) => role === 'user' && part.functionResponse && typeof part.functionResponse.response === 'object').map(({ part }) => part.functionResponse.name),
      assistantCallIds: parts.filter(({ role, part }) => role === 'model' && part.functionCall).map(({ part }) => part.functionCall.name),
    };
    const refusal = this.script.check(view, this.script.peek());
    if (refusal) return error(400, 'INVALID_ARGUMENT', refusal);
    const { turn } = this.script.take(true);
    const promptTokenCount = countTokens(JSON.stringify(body.contents) + JSON.stringify(body.systemInstruction ?? ''));
    const chunks: object[] = [];
    let output = '';
    if (turn.text) {
      for (const piece of textPieces(turn.text, 3)) chunks.push({ candidates: [{ content: { parts: [{ text: piece }], role: 'model' }, index: 0 }] });
      output += turn.text;
    }
    if ('toolCall' in turn) {
      chunks.push({ candidates: [{ content: { parts: [{ functionCall: { name: turn.toolCall.name, args: turn.toolCall.arguments } }], role: 'model' }, index: 0 }] });
      output += JSON.stringify(turn.toolCall.arguments);
    }
    const candidatesTokenCount = countTokens(output);
    this.usage.push([promptTokenCount, candidatesTokenCount]);
    const last = chunks.at(-1) as { candidates: Array<Record<string, unknown>>; usageMetadata?: object };
    last.candidates[0]!.finishReason = 'STOP';
    for (const chunk of chunks) (chunk as any).usageMetadata = { promptTokenCount, candidatesTokenCount: 0, totalTokenCount: promptTokenCount };
    last.usageMetadata = { promptTokenCount, candidatesTokenCount, totalTokenCount: promptTokenCount + candidatesTokenCount };
    await this.stream(response, 'text/event-stream', chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\r\n\r\n`), this.options.firstTokenMs ?? 0, this.options.gapMs ?? 5, dropMid);
  }
}
