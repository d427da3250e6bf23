/**
 * What the HTTP stand-ins share: a server on 127.0.0.1 (port 0), every request recorded for
 * assertions, failures on demand (an HTTP status, or the connection dropped before or during the
 * answer) and chunked streaming with a fixed delay before the first chunk.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: Buffer;
  /** The body parsed as JSON when it is JSON. */
  json?: any;
}

/** `status`: answer with it; `drop`: cut the connection before answering; `drop_mid_stream`: after the first chunk. */
export type Failure = { status: number; body?: string } | 'drop' | 'drop_mid_stream';

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export abstract class HttpStandin {
  readonly requests: RecordedRequest[] = [];
  /**
   * For each streamed answer, how much later than its fixed delay its first chunk was written (ms,
   * from the request's arrival, by this process's clock): what the stand-in itself added, when its
   * process was too busy to answer on time (bench/runtime.ts reports it).
   */
  readonly firstChunkLateMs: number[] = [];
  readonly #arrivedAt = new WeakMap<ServerResponse, number>();
  protected failures: Failure[] = [];
  private server: Server | null = null;
  url = '';

  /** The next request fails this way (queue several for several requests). */
  failNext(failure: Failure): this {
    this.failures.push(failure);
    return this;
  }

  async start(): Promise<this> {
    this.server = createServer((request, response) => void this.receive(request, response));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    this.onServer(this.server);
    return this;
  }

  async close(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
  }

  /** For stand-ins that also upgrade to WebSocket. */
  protected onServer(_server: Server): void {}

  protected abstract handle(request: RecordedRequest, response: ServerResponse, midStreamDrop: boolean): Promise<void>;

  private async receive(request: IncomingMessage, response: ServerResponse): Promise<void> {
    this.#arrivedAt.set(response, performance.now());
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const url = new URL(request.url ?? '/', 'http://standin');
    const recorded: RecordedRequest = { method: request.method ?? 'GET', path: url.pathname, query: url.searchParams, headers: request.headers, body: Buffer.concat(chunks) };
    if (String(request.headers['content-type'] ?? '').includes('json')) {
      try {
        recorded.json = JSON.parse(recorded.body.toString('utf8'));
      } catch {
        recorded.json = undefined;
      }
    }
    this.requests.push(recorded);
    const failure = this.failures.shift();
    if (failure === 'drop') return void request.socket.destroy();
    if (failure && typeof failure === 'object') return this.reply(response, failure.status, failure.body ?? JSON.stringify({ error: { message: `stand-in failure ${failure.status}` } }));
    try {
      await this.handle(recorded, response, failure === 'drop_mid_stream');
    } catch (error) {
      if (!response.headersSent) this.reply(response, 500, JSON.stringify({ error: { message: String(error) } }));
      else response.destroy();
    }
  }

  protected reply(response: ServerResponse, status: number, body: string, contentType = 'application/json'): void {
    response.writeHead(status, { 'content-type': contentType });
    response.end(body);
  }

  /** Streams chunks (the first after `firstDelayMs`, then `gapMs` apart); with `dropMid`, the connection is cut after the first. */
  protected async stream(response: ServerResponse, contentType: string, chunks: Array<string | Buffer>, firstDelayMs: number, gapMs: number, dropMid: boolean): Promise<void> {
    await sleep(firstDelayMs);
    response.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-cache' });
    for (let i = 0; i < chunks.length; i++) {
      if (response.destroyed) return;
      if (i > 0 && gapMs > 0) await sleep(gapMs);
      response.write(chunks[i]!);
      if (i === 0) this.firstChunkLateMs.push(performance.now() - this.#arrivedAt.get(response)! - firstDelayMs);
      if (dropMid) {
        await sleep(20);
        response.socket?.destroy();
        return;
      }
    }
    response.end();
  }
}

/** Splits text into streamed pieces of a few words (keeping the spaces). */
export function textPieces(text: string, wordsPerPiece = 2): string[] {
  const words = text.match(/\S+\s*/g) ?? [];
  const pieces: string[] = [];
  for (let i = 0; i < words.length; i += wordsPerPiece) pieces.push(words.slice(i, i + wordsPerPiece).join(''));
  return pieces;
}

/** Splits a string into `count` pieces of about equal length (tool arguments streamed in fragments). */
export function fragments(text: string, count: number): string[] {
  const size = Math.ceil(text.length / count);
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}
