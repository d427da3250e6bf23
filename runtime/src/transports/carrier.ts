/**
 * The carrier leg: Twilio's Media Streams protocol over a WebSocket (extensions.md §10). The carrier
 * sends `connected`, `start` (with our custom parameters: call_sid, agent_id, token), `media` (base64
 * μ-law 8 kHz, 20 ms), `mark` (the echo of ours once played), `dtmf` and `stop`; we send paced
 * `media`, a `mark` after each utterance and `clear` on barge-in. Hang-up and transfer are not ours:
 * the API server does them through the carrier's REST API when the final report says so.
 */
import type { WebSocket } from 'ws';
import { CARRIER_FORMAT } from '../providers/types.ts';
import type { CallTransport, TransportHandlers } from '../engine/types.ts';
import { AudioPacer } from './pacer.ts';

export interface CarrierStart {
  streamSid: string;
  callSid: string;
  customParameters: Record<string, string>;
  mediaFormat?: { encoding?: string; sampleRate?: number; channels?: number };
}

/** How long `start` may take after the socket opened before the stream is given up. */
const START_TIMEOUT_MS = 10_000;

export class CarrierTransport implements CallTransport {
  readonly format = CARRIER_FORMAT;
  readonly #socket: WebSocket;
  readonly #pacer: AudioPacer;
  readonly #marks = new Map<string, () => void>();
  #handlers: TransportHandlers | null = null;
  #early: Buffer[] = [];
  #streamSid = '';
  #closed = false;
  #hungUp = false;
  readonly started: Promise<CarrierStart>;

  constructor(socket: WebSocket) {
    this.#socket = socket;
    this.#pacer = new AudioPacer({
      frameBytes: 160, // 20 ms of μ-law at 8 kHz
      silenceByte: 0xff,
      sendFrame: (frame) => this.#send({ event: 'media', streamSid: this.#streamSid, media: { payload: frame.toString('base64') } }),
      sendMark: (name, _playsAt, done) => {
        this.#marks.set(name, done);
        this.#send({ event: 'mark', streamSid: this.#streamSid, mark: { name } });
      },
    });
    let onStart!: (start: CarrierStart) => void;
    let onFail!: (error: Error) => void;
    this.started = new Promise((resolve, reject) => { onStart = resolve; onFail = reject; });
    this.started.catch(() => undefined);
    const startTimer = setTimeout(() => onFail(new Error('no start event')), START_TIMEOUT_MS);
    socket.on('message', (data, isBinary) => {
      if (isBinary) return;
      let message: Record<string, any>;
      try { message = JSON.parse(data.toString()); } catch { return; }
      switch (message.event) {
        case 'start': {
          clearTimeout(startTimer);
          const start = message.start ?? {};
          this.#streamSid = String(message.streamSid ?? start.streamSid ?? '');
          onStart({ streamSid: this.#streamSid, callSid: String(start.callSid ?? ''), customParameters: start.customParameters ?? {}, mediaFormat: start.mediaFormat });
          break;
        }
        case 'media':
          if (message.media?.track && message.media.track !== 'inbound') break;
          this.#audio(Buffer.from(String(message.media?.payload ?? ''), 'base64'));
          break;
        case 'mark': {
          const name = String(message.mark?.name ?? '');
          this.#marks.get(name)?.();
          this.#marks.delete(name);
          break;
        }
        case 'dtmf':
          this.#handlers?.dtmf(String(message.dtmf?.digit ?? ''));
          break;
        case 'stop':
          this.#hangup();
          break;
      }
    });
    socket.on('close', () => {
      clearTimeout(startTimer);
      onFail(new Error('closed before start'));
      this.#hangup();
      this.#pacer.close();
      this.#closed = true;
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
    this.#send({ event: 'clear', streamSid: this.#streamSid });
    this.#releaseMarks(); // the carrier drops their audio; nothing more will play
  }

  close() {
    if (this.#closed) return;
    this.#closed = true;
    this.#pacer.close();
    this.#releaseMarks();
    this.#socket.close(1000, 'call ended');
  }

  #audio(frame: Buffer) {
    if (this.#handlers) this.#handlers.audio(frame);
    else if (this.#early.length < 500) this.#early.push(frame);
  }

  #hangup() {
    if (this.#hungUp) return;
    this.#hungUp = true;
    this.#handlers?.hangup();
  }

  #releaseMarks() {
    for (const done of this.#marks.values()) done();
    this.#marks.clear();
  }

  #send(message: object) {
    if (this.#closed || this.#socket.readyState !== this.#socket.OPEN) return;
    this.#socket.send(JSON.stringify(message));
  }
}

