/**
 * Sends agent audio in 20 ms frames no faster than real time plus a fixed lead (one second): the far
 * end's jitter buffer stays full enough to ride out a slow provider chunk, yet a barge-in `clear`
 * never has more than a second to throw away. A timer wakes when the next frame may go; marks travel
 * in the same queue so they follow exactly the audio before them.
 */
import { performance } from 'node:perf_hooks';

export const FRAME_MS = 20;
export const DEFAULT_LEAD_MS = 1000;

export interface PacerOptions {
  frameBytes: number;
  /** The byte that is silence in the format (μ-law 0xFF, PCM 0x00): pads an utterance's last frame. */
  silenceByte: number;
  leadMs?: number;
  sendFrame(frame: Buffer): void;
  /** A mark reached the wire; `playsAtMs` is when (performance.now()) the audio before it will have played. */
  sendMark(name: string, playsAtMs: number, done: () => void): void;
}

type Item = { frame: Buffer } | { mark: string; done: () => void };

export class AudioPacer {
  readonly #options: PacerOptions;
  readonly #leadMs: number;
  #queue: Item[] = [];
  #partial = Buffer.alloc(0);
  /** performance.now() at which everything sent so far has played. */
  #playhead = 0;
  #sentMs = 0;
  #queuedMs = 0;
  #timer: NodeJS.Timeout | null = null;
  #closed = false;

  constructor(options: PacerOptions) {
    this.#options = options;
    this.#leadMs = options.leadMs ?? DEFAULT_LEAD_MS;
  }

  push(audio: Buffer) {
    if (this.#closed || audio.length === 0) return;
    const data = this.#partial.length ? Buffer.concat([this.#partial, audio]) : audio;
    const size = this.#options.frameBytes;
    let offset = 0;
    for (; offset + size <= data.length; offset += size) {
      this.#queue.push({ frame: Buffer.from(data.subarray(offset, offset + size)) });
      this.#queuedMs += FRAME_MS;
    }
    this.#partial = Buffer.from(data.subarray(offset));
    this.#pump();
  }

  /** Resolves when the audio pushed before it has played. */
  mark(name: string): Promise<void> {
    if (this.#partial.length) {
      const last = Buffer.alloc(this.#options.frameBytes, this.#options.silenceByte);
      this.#partial.copy(last);
      this.#partial = Buffer.alloc(0);
      this.#queue.push({ frame: last });
      this.#queuedMs += FRAME_MS;
    }
    return new Promise((resolve) => {
      this.#queue.push({ mark: name, done: resolve });
      this.#pump();
    });
  }

  /** ms accepted so far (sent or waiting), the cleared excluded. */
  acceptedMs() { return this.#sentMs + this.#queuedMs; }

  /** ms the far end has played, assuming it plays what it gets in real time. */
  playedMs() { return this.#sentMs - Math.max(0, this.#playhead - performance.now()); }

  /** Drops what has not played; marks waiting in the queue resolve (their audio will never play). */
  clear() {
    const played = this.playedMs();
    for (const item of this.#queue) if ('mark' in item) item.done();
    this.#queue = [];
    this.#partial = Buffer.alloc(0);
    this.#queuedMs = 0;
    this.#sentMs = played;
    this.#playhead = performance.now();
    this.#cancelTimer();
  }

  close() {
    this.clear();
    this.#closed = true;
  }

  #pump() {
    this.#cancelTimer();
    while (this.#queue.length && !this.#closed) {
      const now = performance.now();
      const item = this.#queue[0]!;
      if ('mark' in item) {
        this.#queue.shift();
        this.#options.sendMark(item.mark, Math.max(now, this.#playhead), item.done);
        continue;
      }
      const ahead = this.#playhead - now;
      if (ahead + FRAME_MS > this.#leadMs) {
        this.#timer = setTimeout(() => this.#pump(), Math.max(1, ahead + FRAME_MS - this.#leadMs));
        return;
      }
      this.#queue.shift();
      this.#queuedMs -= FRAME_MS;
      this.#sentMs += FRAME_MS;
      this.#playhead = Math.max(this.#playhead, now) + FRAME_MS;
      this.#options.sendFrame(item.frame);
    }
  }

  #cancelTimer() {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
  }
}
