import { WebSocket } from 'ws';
import { pcm16ToSamples, rms } from '@switchboard/runtime';
import { speechPcm } from '../../runtime/test/helpers/speech.ts';

/**
 * The browser's side of a preview call (extensions.md §11), as the console plays it: a 20 ms frame of
 * 16-bit little-endian mono PCM at 16 kHz every 20 ms in real time — silence, or eSpeak NG speech
 * while the user talks — and the runtime's binary audio and JSON events recorded as they arrive.
 */
const FRAME_MS = 20;
const FRAME_BYTES = 640; // 20 ms of 16-bit PCM at 16 kHz

export interface PreviewClient {
  /** The runtime's JSON events with when they arrived (ms since the socket opened). */
  events: Array<{ at: number; message: any }>;
  /** The runtime's binary frames with when they arrived. */
  audio: Array<{ at: number; frame: Buffer }>;
  say(text: string): Promise<void>;
  waitFor(what: string, until: () => boolean, timeoutMs?: number): Promise<void>;
  /** Frames after `since` (ms) louder than silence: the agent speaking. */
  speechFramesSince(since: number): number;
  now(): number;
  send(message: object): void;
  closed: Promise<{ code: number; reason: string }>;
}

export async function connectPreview(url: string): Promise<PreviewClient> {
  const socket = new WebSocket(url);
  const closed = new Promise<{ code: number; reason: string }>((resolve) => socket.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  await new Promise<void>((resolve, reject) => { socket.once('open', () => resolve()); socket.once('error', reject); });
  const opened = performance.now();
  const now = () => performance.now() - opened;
  const events: PreviewClient['events'] = [];
  const audio: PreviewClient['audio'] = [];
  socket.on('message', (data, isBinary) => {
    if (isBinary) audio.push({ at: now(), frame: Buffer.from(data as Buffer) });
    else events.push({ at: now(), message: JSON.parse(data.toString()) });
  });
  const speech: Buffer[] = [];
  let speechDone: (() => void) | null = null;
  let framesSent = 0;
  // One frame every 20 ms against the clock, as a microphone delivers them.
  const pump = setInterval(() => {
    const due = Math.floor(now() / FRAME_MS);
    while (framesSent < due && socket.readyState === WebSocket.OPEN) {
      socket.send(speech.shift() ?? Buffer.alloc(FRAME_BYTES), { binary: true });
      if (speech.length === 0 && speechDone) { const done = speechDone; speechDone = null; done(); }
      framesSent++;
    }
  }, 10);
  void closed.then(() => { clearInterval(pump); speechDone?.(); });
  return {
    events, audio, now, closed,
    send: (message) => { if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message)); },
    async say(text) {
      const pcm = await speechPcm(text, 16000);
      const frames: Buffer[] = [];
      for (let offset = 0; offset < pcm.length; offset += FRAME_BYTES) {
        const frame = Buffer.alloc(FRAME_BYTES);
        pcm.copy(frame, 0, offset, Math.min(pcm.length, offset + FRAME_BYTES));
        frames.push(frame);
      }
      await new Promise<void>((resolve) => { speech.push(...frames); speechDone = resolve; });
    },
    async waitFor(what, until, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (!until()) {
        if (Date.now() > deadline) throw new Error(`the browser waited ${timeoutMs} ms for ${what}; events: ${events.map((e) => e.message.type).join(', ')}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    speechFramesSince(since) {
      return audio.filter((a) => a.at >= since && rms(pcm16ToSamples(a.frame)) > 300).length;
    },
  };
}
