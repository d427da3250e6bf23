/**
 * The browser leg (extensions.md §11): binary frames of 16-bit little-endian mono PCM at 16 kHz (20 ms)
 * both ways, JSON text frames for the live view, and `{type: "end"}` from the browser to hang up.
 * A browser has no marks: an utterance counts as played when the pacing says its audio has.
 */
import { performance } from 'node:perf_hooks';
import type { WebSocket } from 'ws';
import { PREVIEW_FORMAT } from '../providers/types.ts';
import type { EndReason, TurnLatency } from '../platform/call-platform.ts';
import type { CallTransport, TransportHandlers } from '../engine/types.ts';
import { AudioPacer } from './pacer.ts';

export class PreviewTransport implements CallTransport {
  readonly format = PREVIEW_FORMAT;
  readonly #socket: WebSocket;
  readonly #pacer: AudioPacer;
  readonly #markTimers = new Map<NodeJS.Timeout, () => void>();
  #handlers: TransportHandlers | null = null;
  #early: Buffer[] = [];
  #closed = false;
  #hungUp = false;

  constructor(socket: WebSocket) {
    this.#socket = socket;
    this.#pacer = new AudioPacer({
      frameBytes: 640, // 20 ms of 16-bit PCM at 16 kHz
      silenceByte: 0,
      sendFrame: (frame) => { if (this.#open()) this.#socket.send(frame, { binary: true }); },
      sendMark: (_name, playsAt, done) => {
        const timer = setTimeout(() => { this.#markTimers.delete(timer); done(); }, Math.max(0, playsAt - performance.now()));
        this.#markTimers.set(timer, done);
      },
    });
    socket.on('message', (data, isBinary) => {
      if (isBinary) {
        const frame = Buffer.isBuffer(data) ? data : Buffer.concat(data as Buffer[]);
        if (this.#handlers) this.#handlers.audio(frame);
        else if (this.#early.length < 500) this.#early.push(frame);
        return;
      }
      try {
        const message = JSON.parse(data.toString()) as { type?: string };
        if (message.type === 'end') this.#hangup();
      } catch { /* not JSON: ignored */ }
    });
    socket.on('close', () => {
      this.#hangup();
      this.#closed = true;
      this.#pacer.close();
      this.#releaseMarks();
    });
  }

  attach(handlers: TransportHandlers) {
    this.#handlers = handlers;
    for (const frame of this.#early.splice(0)) handlers.audio(frame);
  }

  sendAudio(audio: Buffer) { this.#pacer.push(audio); }
  markUtteranceEnd(name: string) { return this.#pacer.mark(name); }
  sentMs() { return this.#pacer.acceptedMs(); }
  playedMs() { return this.#pacer.playedMs(); }

  clear() {
    this.#pacer.clear();
    this.#releaseMarks();
  }

  close() {
    if (this.#closed) return;
    this.#closed = true;
    this.#pacer.close();
    this.#releaseMarks();
    this.#socket.close(1000, 'call ended');
  }

  /** A browser is told why with a policy close (1008), as for a missing token, so it can show the refusal. */
  refuse(reason: string) {
    if (this.#closed) return;
    this.#closed = true;
    this.#pacer.close();
    this.#releaseMarks();
    this.#socket.close(1008, reason.slice(0, 120));
  }

  transcript(role: 'agent' | 'user', text: string, final: boolean) { this.#json({ type: 'transcript', role, text, final }); }
  agentSpeaking(speaking: boolean) { this.#json({ type: 'agent_speaking', speaking }); }
  turn(latency: TurnLatency) { this.#json({ type: 'turn', latency }); }
  ended(endReason: EndReason) { this.#json({ type: 'ended', end_reason: endReason }); }

  #hangup() {
    if (this.#hungUp) return;
    this.#hungUp = true;
    this.#handlers?.hangup();
  }

  #releaseMarks() {
    for (const [timer, done] of this.#markTimers) { clearTimeout(timer); done(); }
    this.#markTimers.clear();
  }

  #open() { return !this.#closed && this.#socket.readyState === this.#socket.OPEN; }
  #json(message: object) { if (this.#open()) this.#socket.send(JSON.stringify(message)); }
}
