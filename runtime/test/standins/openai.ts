/**
 * OpenAI stand-in (and Groq's, and any OpenAI-compatible server's): chat completions streamed with
 * tools, speech (`response_format: pcm`, 24 kHz eSpeak speech), transcriptions (a WAV in, the
 * next scripted phrase out when the WAV holds speech) and the models list, all under Bearer auth.
 * Paths are matched by their ending, so Groq's `/openai/v1/...` is served as well.
 */
import type { ServerResponse } from 'node:http';
import { rms } from '../../src/audio/pcm.ts';
import { synthesizeSpeech } from '../../src/audio/synthesize.ts';
import { decodeWav } from '../../src/audio/wav.ts';
import { HttpStandin, fragments, textPieces, type RecordedRequest } from './http-standin.ts';
import { LlmScript, countTokens, type LlmStandinOptions } from './llm-script.ts';
import { PhraseQueue, SPEECH_RMS } from './speech-activity.ts';

export interface OpenAiStandinOptions extends LlmStandinOptions {
  /** Delay before the first audio byte of /v1/audio/speech. */
  firstByteMs?: number;
  /** Delay before a transcription's answer. */
  sttFinalMs?: number;
}

export class OpenAiStandin extends HttpStandin {
  readonly options: OpenAiStandinOptions;
  readonly script: LlmScript;
  readonly phrases = new PhraseQueue();
  readonly usage: Array<[number, number]> = [];
  /** Each transcription request's WAV as received. */
  readonly transcribed: Array<{ sampleRate: number; channels: number; seconds: number; model: string; language: string }> = [];

  constructor(options: OpenAiStandinOptions) {
    super();
    this.options = options;
    this.script = new LlmScript(options.script ?? []);
  }

  protected async handle(request: RecordedRequest, response: ServerResponse, dropMid: boolean): Promise<void> {
    const error = (status: number, message: string, type = 'invalid_request_error') => this.reply(response, status, JSON.stringify({ error: { message, type, code: null } }));
    if (request.headers.authorization !== `Bearer ${this.options.key}`) return error(401, 'Incorrect API key provided.', 'invalid_api_key');
    if (request.method === 'GET' && request.path.endsWith('/v1/models')) return this.reply(response, 200, JSON.stringify({ object: 'list', data: [{ id: 'gpt-test', object: 'model' }] }));
    if (request.method !== 'POST') return error(404, 'not found');
    if (request.path.endsWith('/v1/chat/completions')) return this.chat(request, response, dropMid, error);
    if (request.path.endsWith('/v1/audio/speech')) return this.speech(request, response, dropMid, error);
    if (request.path.endsWith('/v1/audio/transcriptions')) return this.transcription(request, response, error);
    return error(404, 'not found');
  }

  private async chat(request: RecordedRequest, response: ServerResponse, dropMid: boolean, error: (status: number, message: string) => void): Promise<void> {
    const body = request.json;
    if (!body || typeof body.model !== 'string' || !Array.isArray(body.messages)) return error(400, 'model and messages are required');
    if (body.stream !== true) return error(400, 'the stand-in only streams');
    if (Array.isArray(body.tools) && body.tools.length === 0) return error(400, "[] is too short - 'tools'");
    const messages = body.messages as Array<Record<string, any>>;
    const view = {
      toolNames: (body.tools ?? []).filter((tool: any) => tool.type === 'function' && tool.function?.parameters).map((tool: any) => tool.function.name),
      toolResultIds: messages.filter((message) => message.role === 'tool' && typeof message.content === 'string').map((message) => message.tool_call_id),
      assistantCallIds: messages
        .filter((message) => message.role === 'assistant')
        .flatMap((message) => message.tool_calls ?? [])
        .filter((call: any) => call.type === 'function' && typeof call.function?.arguments === 'string')
        .map((call: any) => call.id),
    };
    const refusal = this.script.check(view, this.script.peek());
    if (refusal) return error(400, refusal);
    const { turn, callId } = this.script.take();
    const base = { id: 'chatcmpl-standin', object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model: body.model };
    const chunk = (delta: object, finish: string | null = null) => ({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] });
    const chunks: object[] = [chunk({ role: 'assistant', content: '' })];
    let output = '';
    if (turn.text) {
      for (const piece of textPieces(turn.text)) chunks.push(chunk({ content: piece }));
      output += turn.text;
    }
    if ('toolCall' in turn) {
      const json = JSON.stringify(turn.toolCall.arguments);
      chunks.push(chunk({ tool_calls: [{ index: 0, id: callId, type: 'function', function: { name: turn.toolCall.name, arguments: '' } }] }));
      for (const piece of fragments(json, 3)) chunks.push(chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] }));
      output += json;
    }
    chunks.push(chunk({}, 'toolCall' in turn ? 'tool_calls' : 'stop'));
    const usage = { prompt_tokens: countTokens(JSON.stringify(messages)), completion_tokens: countTokens(output) };
    this.usage.push([usage.prompt_tokens, usage.completion_tokens]);
    if (body.stream_options?.include_usage) chunks.push({ ...base, choices: [], usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } });
    const lines = [...chunks.map((data) => `data: ${JSON.stringify(data)}\n\n`), 'data: [DONE]\n\n'];
    await this.stream(response, 'text/event-stream', lines, this.options.firstTokenMs ?? 0, this.options.gapMs ?? 5, dropMid);
  }

  private async speech(request: RecordedRequest, response: ServerResponse, dropMid: boolean, error: (status: number, message: string) => void): Promise<void> {
    const body = request.json;
    if (!body || typeof body.model !== 'string' || typeof body.voice !== 'string' || typeof body.input !== 'string' || body.input === '') return error(400, 'model, voice and input are required');
    if (body.response_format !== 'pcm') return error(400, 'the stand-in only answers response_format pcm');
    const audio = await synthesizeSpeech(body.input, 24000);
    const chunks: Buffer[] = [];
    for (let offset = 0; offset < audio.length; offset += 4801) chunks.push(audio.subarray(offset, offset + 4801)); // odd sizes: samples split across chunks, as on the wire
    await this.stream(response, 'audio/pcm', chunks, this.options.firstByteMs ?? 0, 2, dropMid);
  }

  private async transcription(request: RecordedRequest, response: ServerResponse, error: (status: number, message: string) => void): Promise<void> {
    const form = await new Request('http://standin/', { method: 'POST', headers: { 'content-type': String(request.headers['content-type']) }, body: request.body }).formData().catch(() => null);
    const file = form?.get('file');
    const model = form?.get('model');
    if (!form || !(file instanceof Blob) || typeof model !== 'string') return error(400, 'multipart with file and model is required');
    let wav;
    try {
      wav = decodeWav(Buffer.from(await file.arrayBuffer()));
    } catch (cause) {
      return error(400, `Invalid file format: ${String(cause)}`);
    }
    this.transcribed.push({ sampleRate: wav.sampleRate, channels: wav.channels, seconds: wav.samples.length / wav.channels / wav.sampleRate, model, language: String(form.get('language') ?? '') });
    // Speech when any 10 ms of the (mono) utterance is loud enough.
    const step = wav.sampleRate / 100;
    let heardSpeech = false;
    for (let offset = 0; offset + step <= wav.samples.length && !heardSpeech; offset += step) heardSpeech = rms(wav.samples.subarray(offset, offset + step)) > SPEECH_RMS;
    await new Promise((resolve) => setTimeout(resolve, this.options.sttFinalMs ?? 0));
    this.reply(response, 200, JSON.stringify({ text: heardSpeech ? this.phrases.next() : '' }));
  }
}
