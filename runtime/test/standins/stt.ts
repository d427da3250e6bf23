/**
 * Streaming STT stand-ins for Deepgram (/v1/listen) and AssemblyAI (/v3/ws). They hear the audio
 * (speech activity on the decoded bytes), answer interim results as an utterance grows, and the
 * final text (the next scripted phrase) when the caller has been silent for the endpointing time
 * or when asked to finalize, `sttFinalMs` later. Upgrades without the right key are refused 401;
 * `dropAfterAudio()` cuts the socket (no close frame) once audio arrives.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { AudioFormat } from '../../src/providers/types.ts';
import { HttpStandin, sleep, type RecordedRequest } from './http-standin.ts';
import { PhraseQueue, SpeechActivity, interimWords } from './speech-activity.ts';

export interface SttStandinOptions {
  key: string;
  /** Delay of a final result after the endpoint or the finalize request. */
  sttFinalMs?: number;
}

export interface SessionRecord {
  query: URLSearchParams;
  format: AudioFormat;
  audioBytes: number;
  /** Binary messages' sizes. */
  messageBytes: number[];
  /** Text messages received (control messages), parsed. */
  controls: Array<Record<string, unknown>>;
  closed: boolean;
}

abstract class SttStandin extends HttpStandin {
  readonly options: SttStandinOptions;
  readonly phrases = new PhraseQueue();
  readonly sessions: SessionRecord[] = [];
  protected readonly sockets = new WebSocketServer({ noServer: true });
  private dropNext = false;
  private refuseNext: number | null = null;

  constructor(options: SttStandinOptions) {
    super();
    this.options = options;
  }

  /** The next stream is cut (socket destroyed) when its first audio arrives. */
  dropAfterAudio(): this {
    this.dropNext = true;
    return this;
  }

  /** The next upgrade is refused with this HTTP status. */
  refuseUpgrade(status: number): this {
    this.refuseNext = status;
    return this;
  }

  protected override onServer(server: Server): void {
    server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
      const url = new URL(request.url ?? '/', 'http://standin');
      const refusal = this.refuseNext ?? this.refusal(url, request);
      this.refuseNext = null;
      if (refusal) {
        socket.end(`HTTP/1.1 ${refusal} Refused\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n${JSON.stringify({ err_code: refusal === 401 ? 'INVALID_AUTH' : 'REFUSED' })}`);
        return;
      }
      this.sockets.handleUpgrade(request, socket, head, (ws) => {
        const drop = this.dropNext;
        this.dropNext = false;
        this.session(ws, url.searchParams, drop);
      });
    });
  }

  override async close(): Promise<void> {
    for (const client of this.sockets.clients) client.terminate();
    await super.close();
  }

  /** An HTTP status to refuse the upgrade with (wrong path, auth or query), or null. */
  protected abstract refusal(url: URL, request: IncomingMessage): number | null;
  protected abstract session(ws: WebSocket, query: URLSearchParams, drop: boolean): void;

  protected record(query: URLSearchParams, format: AudioFormat): SessionRecord {
    const record: SessionRecord = { query, format, audioBytes: 0, messageBytes: [], controls: [], closed: false };
    this.sessions.push(record);
    return record;
  }
}

export class DeepgramStandin extends SttStandin {
  protected async handle(request: RecordedRequest, response: ServerResponse): Promise<void> {
    if (request.headers.authorization !== `Token ${this.options.key}`) return this.reply(response, 401, JSON.stringify({ err_code: 'INVALID_AUTH', err_msg: 'Invalid credentials.' }));
    if (request.method === 'GET' && request.path === '/v1/projects') return this.reply(response, 200, JSON.stringify({ projects: [] }));
    return this.reply(response, 404, '{}');
  }

  protected refusal(url: URL, request: IncomingMessage): number | null {
    if (url.pathname !== '/v1/listen') return 404;
    if (request.headers.authorization !== `Token ${this.options.key}`) return 401;
    const encoding = url.searchParams.get('encoding');
    if (!['mulaw', 'linear16'].includes(encoding ?? '') || !Number(url.searchParams.get('sample_rate'))) return 400;
    return null;
  }

  protected session(ws: WebSocket, query: URLSearchParams, drop: boolean): void {
    const format: AudioFormat = { encoding: query.get('encoding') === 'mulaw' ? 'mulaw' : 'pcm16', sampleRate: Number(query.get('sample_rate')) };
    const record = this.record(query, format);
    const activity = new SpeechActivity(format);
    const endpointingMs = Number(query.get('endpointing') ?? 10);
    const interim = query.get('interim_results') === 'true';
    let finalizing = false;
    let lastInterimAt = 0;
    const results = (transcript: string, fields: { is_final: boolean; speech_final: boolean; from_finalize?: boolean }) => {
      if (ws.readyState !== ws.OPEN) return;
      ws.send(JSON.stringify({ type: 'Results', channel_index: [0, 1], duration: activity.speechMs / 1000, start: 0, ...fields, from_finalize: fields.from_finalize ?? false, channel: { alternatives: [{ transcript, confidence: transcript ? 0.98 : 0, words: [] }] }, metadata: { request_id: 'standin' } }));
    };
    const finish = async (how: 'endpoint' | 'finalize') => {
      const spoke = activity.speechMs > 0;
      activity.reset();
      const phrase = spoke ? this.phrases.next() : '';
      await sleep(this.options.sttFinalMs ?? 0);
      results(phrase, how === 'endpoint' ? { is_final: true, speech_final: true } : { is_final: true, speech_final: false, from_finalize: true });
    };
    ws.on('message', (data: Buffer, isBinary) => {
      if (isBinary) {
        if (drop) return void ws.terminate();
        record.audioBytes += data.length;
        record.messageBytes.push(data.length);
        activity.feed(data, () => {
          if (finalizing || activity.speechMs === 0) return;
          if (activity.silenceMs >= endpointingMs && activity.silenceMs > 0) {
            finalizing = true;
            void finish('endpoint').then(() => (finalizing = false));
          } else if (interim && activity.silenceMs === 0 && activity.heardMs - lastInterimAt >= 200) {
            lastInterimAt = activity.heardMs;
            results(interimWords(this.phrases.peek(), activity.speechMs), { is_final: false, speech_final: false });
          }
        });
        return;
      }
      const control = JSON.parse(data.toString()) as { type?: string };
      record.controls.push(control);
      if (control.type === 'Finalize') {
        finalizing = true;
        void finish('finalize').then(() => (finalizing = false));
      } else if (control.type === 'CloseStream') {
        record.closed = true;
        ws.send(JSON.stringify({ type: 'Metadata', request_id: 'standin', duration: activity.heardMs / 1000, channels: 1 }));
        ws.close(1000);
      }
    });
  }
}

export class AssemblyAiStandin extends SttStandin {
  /** Silence that ends a turn (AssemblyAI's min_end_of_turn_silence_when_confident default). */
  static readonly END_OF_TURN_SILENCE_MS = 400;

  protected async handle(request: RecordedRequest, response: ServerResponse): Promise<void> {
    if (request.headers.authorization !== this.options.key) return this.reply(response, 401, JSON.stringify({ error: 'Authentication error, API token missing/invalid' }));
    if (request.method === 'GET' && request.path === '/v2/transcript') return this.reply(response, 200, JSON.stringify({ transcripts: [], page_details: { limit: 1 } }));
    return this.reply(response, 404, '{}');
  }

  protected refusal(url: URL, request: IncomingMessage): number | null {
    if (url.pathname !== '/v3/ws') return 404;
    if (request.headers.authorization !== this.options.key) return 401;
    if (!['pcm_mulaw', 'pcm_s16le'].includes(url.searchParams.get('encoding') ?? 'pcm_s16le') || !Number(url.searchParams.get('sample_rate'))) return 400;
    return null;
  }

  protected session(ws: WebSocket, query: URLSearchParams, drop: boolean): void {
    const format: AudioFormat = { encoding: query.get('encoding') === 'pcm_mulaw' ? 'mulaw' : 'pcm16', sampleRate: Number(query.get('sample_rate')) };
    const record = this.record(query, format);
    const activity = new SpeechActivity(format);
    const formatTurns = query.get('format_turns') === 'true';
    const bytesPerMs = (format.sampleRate * (format.encoding === 'mulaw' ? 1 : 2)) / 1000;
    let turnOrder = 0;
    let ending = false;
    let lastPartialAt = 0;
    const turn = (transcript: string, endOfTurn: boolean, formatted: boolean) => {
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify({ type: 'Turn', turn_order: turnOrder, turn_is_formatted: formatted, end_of_turn: endOfTurn, transcript, end_of_turn_confidence: endOfTurn ? 0.9 : 0.1, words: [] }));
    };
    const endTurn = async () => {
      ending = true;
      activity.reset();
      const phrase = this.phrases.next();
      await sleep(this.options.sttFinalMs ?? 0);
      const raw = phrase.toLowerCase().replace(/[^\p{L}\p{N}\s']/gu, '');
      turn(raw, true, false);
      if (formatTurns) turn(phrase, true, true);
      turnOrder++;
      ending = false;
    };
    ws.send(JSON.stringify({ type: 'Begin', id: 'standin-session', expires_at: Math.floor(Date.now() / 1000) + 3600 }));
    ws.on('message', (data: Buffer, isBinary) => {
      if (isBinary) {
        if (drop) return void ws.terminate();
        const ms = data.length / bytesPerMs;
        // AssemblyAI's rule: each message carries 50 to 1000 ms of audio.
        if (ms < 50 || ms > 1000) return void ws.close(3007, 'Input duration violation');
        record.audioBytes += data.length;
        record.messageBytes.push(data.length);
        activity.feed(data, () => {
          if (ending || activity.speechMs === 0) return;
          if (activity.silenceMs >= AssemblyAiStandin.END_OF_TURN_SILENCE_MS) void endTurn();
          else if (activity.silenceMs === 0 && activity.heardMs - lastPartialAt >= 200) {
            lastPartialAt = activity.heardMs;
            turn(interimWords(this.phrases.peek(), activity.speechMs).toLowerCase(), false, false);
          }
        });
        return;
      }
      const control = JSON.parse(data.toString()) as { type?: string };
      record.controls.push(control);
      // ForceEndpoint with no speech in the turn has nothing to end: the stand-in says nothing, as the vendor does.
      if (control.type === 'ForceEndpoint' && activity.speechMs > 0 && !ending) void endTurn();
      else if (control.type === 'Terminate') {
        record.closed = true;
        ws.send(JSON.stringify({ type: 'Termination', audio_duration_seconds: activity.heardMs / 1000, session_duration_seconds: activity.heardMs / 1000 }));
        ws.close(1000);
      }
    });
  }
}
