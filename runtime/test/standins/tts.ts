/**
 * TTS stand-ins for ElevenLabs, Cartesia and Azure: each checks its vendor's auth header and
 * request shape, and streams real synthesized speech (eSpeak NG) in the format asked for, in
 * chunks, after a fixed first-byte delay. (OpenAI's speech is served by the OpenAI stand-in.)
 */
import type { ServerResponse } from 'node:http';
import { encodeSamples } from '../../src/audio/convert.ts';
import { pcm16ToSamples } from '../../src/audio/pcm.ts';
import { synthesizeSpeech } from '../../src/audio/synthesize.ts';
import type { AudioFormat } from '../../src/providers/types.ts';
import { HttpStandin, type RecordedRequest } from './http-standin.ts';

export interface TtsStandinOptions {
  key: string;
  firstByteMs?: number;
  /** Audio per streamed chunk, ms. */
  chunkMs?: number;
}

abstract class TtsStandin extends HttpStandin {
  readonly options: TtsStandinOptions;
  /** Every synthesis served: the text and the format sent. */
  readonly served: Array<{ text: string; format: AudioFormat }> = [];

  constructor(options: TtsStandinOptions) {
    super();
    this.options = options;
  }

  protected async speak(response: ServerResponse, text: string, format: AudioFormat, contentType: string, dropMid: boolean): Promise<void> {
    this.served.push({ text, format });
    const audio = encodeSamples(pcm16ToSamples(await synthesizeSpeech(text, format.sampleRate)), format.encoding);
    const chunkBytes = Math.round(((this.options.chunkMs ?? 100) * format.sampleRate * (format.encoding === 'mulaw' ? 1 : 2)) / 1000) + (format.encoding === 'mulaw' ? 0 : 1);
    const chunks: Buffer[] = [];
    for (let offset = 0; offset < audio.length; offset += chunkBytes) chunks.push(audio.subarray(offset, offset + chunkBytes));
    await this.stream(response, contentType, chunks, this.options.firstByteMs ?? 0, 2, dropMid);
  }
}

export class ElevenLabsStandin extends TtsStandin {
  protected async handle(request: RecordedRequest, response: ServerResponse, dropMid: boolean): Promise<void> {
    const error = (status: number, code: string, message: string) => this.reply(response, status, JSON.stringify({ detail: { status: code, message } }));
    if (request.headers['xi-api-key'] !== this.options.key) return error(401, 'invalid_api_key', 'Invalid API key');
    if (request.method === 'GET' && request.path === '/v1/user') return this.reply(response, 200, JSON.stringify({ subscription: { tier: 'standin' } }));
    const match = /^\/v1\/text-to-speech\/([^/]+)\/stream$/.exec(request.path);
    if (!match || request.method !== 'POST') return error(404, 'not_found', 'not found');
    const body = request.json;
    if (!body || typeof body.text !== 'string' || body.text === '') return error(422, 'invalid_request', 'text is required');
    const outputFormat = request.query.get('output_format') ?? 'mp3_44100_128';
    let format: AudioFormat;
    if (outputFormat === 'ulaw_8000') format = { encoding: 'mulaw', sampleRate: 8000 };
    else if (/^pcm_(8000|16000|22050|24000|44100)$/.test(outputFormat)) format = { encoding: 'pcm16', sampleRate: Number(outputFormat.slice(4)) };
    else return error(400, 'invalid_output_format', `the stand-in cannot make ${outputFormat}`);
    await this.speak(response, body.text, format, outputFormat === 'ulaw_8000' ? 'audio/basic' : 'audio/pcm', dropMid);
  }
}

export class CartesiaStandin extends TtsStandin {
  protected async handle(request: RecordedRequest, response: ServerResponse, dropMid: boolean): Promise<void> {
    const error = (status: number, message: string) => this.reply(response, status, JSON.stringify({ error: message }));
    if (request.headers['x-api-key'] !== this.options.key) return error(401, 'Invalid API key');
    if (!request.headers['cartesia-version']) return error(400, 'Cartesia-Version header is required');
    if (request.method === 'GET' && request.path === '/voices') return this.reply(response, 200, JSON.stringify([{ id: 'voice-standin', name: 'Stand-in' }]));
    if (request.method !== 'POST' || request.path !== '/tts/bytes') return error(404, 'not found');
    const body = request.json;
    const output = body?.output_format;
    if (!body || typeof body.model_id !== 'string' || typeof body.transcript !== 'string' || body.voice?.mode !== 'id' || typeof body.voice?.id !== 'string') return error(400, 'model_id, transcript and voice {mode: id, id} are required');
    if (output?.container !== 'raw' || !['pcm_mulaw', 'pcm_s16le'].includes(output.encoding) || ![8000, 16000, 22050, 24000, 44100, 48000].includes(output.sample_rate)) return error(400, 'unsupported output_format');
    await this.speak(response, body.transcript, { encoding: output.encoding === 'pcm_mulaw' ? 'mulaw' : 'pcm16', sampleRate: output.sample_rate }, 'application/octet-stream', dropMid);
  }
}

const AZURE_FORMATS: Record<string, AudioFormat> = {
  'raw-8khz-8bit-mono-mulaw': { encoding: 'mulaw', sampleRate: 8000 },
  'raw-8khz-16bit-mono-pcm': { encoding: 'pcm16', sampleRate: 8000 },
  'raw-16khz-16bit-mono-pcm': { encoding: 'pcm16', sampleRate: 16000 },
  'raw-24khz-16bit-mono-pcm': { encoding: 'pcm16', sampleRate: 24000 },
  'raw-48khz-16bit-mono-pcm': { encoding: 'pcm16', sampleRate: 48000 },
};

function unescapeXml(text: string): string {
  return text.replace(/&(lt|gt|amp|apos|quot);/g, (_, name: string) => ({ lt: '<', gt: '>', amp: '&', apos: "'", quot: '"' })[name]!);
}

export class AzureStandin extends TtsStandin {
  /** The voice names asked for. */
  readonly voices: string[] = [];

  protected async handle(request: RecordedRequest, response: ServerResponse, dropMid: boolean): Promise<void> {
    if (request.headers['ocp-apim-subscription-key'] !== this.options.key) return this.reply(response, 401, '', 'text/plain');
    if (request.method === 'GET' && request.path === '/cognitiveservices/voices/list') return this.reply(response, 200, JSON.stringify([{ ShortName: 'en-US-JennyNeural' }]));
    if (request.method !== 'POST' || request.path !== '/cognitiveservices/v1') return this.reply(response, 404, '', 'text/plain');
    if (request.headers['content-type'] !== 'application/ssml+xml') return this.reply(response, 415, '', 'text/plain');
    const format = AZURE_FORMATS[String(request.headers['x-microsoft-outputformat'])];
    if (!format) return this.reply(response, 400, 'unsupported X-Microsoft-OutputFormat', 'text/plain');
    const ssml = request.body.toString('utf8');
    const match = /^<speak version='1\.0' xml:lang='[^']+'><voice name='([^']+)'>([^<]*)<\/voice><\/speak>$/.exec(ssml);
    if (!match) return this.reply(response, 400, 'malformed SSML', 'text/plain');
    this.voices.push(unescapeXml(match[1]!));
    await this.speak(response, unescapeXml(match[2]!), format, 'audio/basic', dropMid);
  }
}
