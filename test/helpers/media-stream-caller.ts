import { WebSocket } from 'ws';
import { mulawDecode, mulawEncode, pcm16ToSamples, rms } from '@switchboard/runtime';
import { synthesizeSpeech } from '../../runtime/src/audio/synthesize.ts';
import { children, type XmlNode } from './telephony.ts';

/**
 * The carrier's side of a Media Streams call (extensions.md §10, Twilio's protocol), as the carrier
 * plays it: connects to the `<Stream url>` of the TwiML with its `<Parameter>`s, sends `connected`
 * and `start`, then a 20 ms μ-law frame every 20 ms in real time — silence, or eSpeak NG speech while
 * the caller talks. What the runtime sends is "played" in real time: each mark is echoed once the
 * audio before it has played; `clear` drops what has not played and echoes the pending marks.
 */
const FRAME_MS = 20;
const FRAME_BYTES = 160; // 20 ms of μ-law at 8 kHz
const SILENCE = 0xff; // μ-law zero

export interface OutboundFrame { at: number; payload: Buffer }

export interface MediaStreamCaller {
  streamSid: string;
  /** Every message the runtime sent, in order, with the time it arrived (ms since the stream opened). */
  received: Array<{ at: number; message: any }>;
  outbound: OutboundFrame[];
  /** Speaks `text` (eSpeak NG at 8 kHz, μ-law) in real time; resolves when its last frame is sent. */
  say(text: string): Promise<void>;
  /** Resolves when `until` holds (checked every 20 ms), or rejects after `timeoutMs`. */
  waitFor(what: string, until: () => boolean, timeoutMs?: number): Promise<void>;
  /** Whether the outbound audio after `since` (ms) holds speech: 20 ms frames louder than silence. */
  speechFramesSince(since: number): number;
  /** Ms since the stream opened. */
  now(): number;
  /** When the runtime's audio received so far will have played (ms since the stream opened). */
  playhead(): number;
  /** The carrier's `stop` (the caller hung up, or the call was ended through the REST API), then the socket closes. */
  stop(): void;
  closed: Promise<{ code: number; reason: string }>;
}

/** The stream URL and parameters of `<Connect><Stream>` in the voice answer. */
export function streamOf(twiml: XmlNode): { url: string; parameters: Record<string, string> } {
  const [stream] = children(children(twiml.documentElement, 'Connect')[0]!, 'Stream');
  if (!stream) throw new Error('the TwiML connects no stream');
  const parameters = Object.fromEntries(children(stream, 'Parameter').map((p) => [p.getAttribute('name')!, p.getAttribute('value')!]));
  return { url: stream.getAttribute('url')!, parameters };
}

/** A μ-law frame's loudness as 16-bit PCM RMS. */
export const frameLevel = (payload: Buffer) => rms(mulawDecode(payload));

export async function callMediaStream(options: { url: string; parameters: Record<string, string>; carrierCallSid: string; accountSid: string }): Promise<MediaStreamCaller> {
  const socket = new WebSocket(options.url);
  const opened = performance.now();
  const now = () => performance.now() - opened;
  const streamSid = `MZ${options.carrierCallSid.slice(2)}`;
  const received: MediaStreamCaller['received'] = [];
  const outbound: OutboundFrame[] = [];
  let playhead = 0; // when the runtime's audio sent so far has played
  const pendingMarks = new Map<NodeJS.Timeout, string>();
  const speech: Buffer[] = [];
  let speechDone: (() => void) | null = null;
  let sequence = 1;
  let timestamp = 0;

  const closed = new Promise<{ code: number; reason: string }>((resolve) => socket.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  const send = (message: object) => { if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message)); };
  const echoMark = (name: string) => send({ event: 'mark', sequenceNumber: String(sequence++), streamSid, mark: { name } });

  socket.on('message', (data) => {
    const message = JSON.parse(data.toString());
    const at = now();
    received.push({ at, message });
    if (message.event === 'media') {
      const payload = Buffer.from(message.media.payload, 'base64');
      outbound.push({ at, payload });
      playhead = Math.max(playhead, at) + payload.length / 8;
    } else if (message.event === 'mark') {
      const timer = setTimeout(() => { pendingMarks.delete(timer); echoMark(message.mark.name); }, Math.max(0, playhead - at));
      pendingMarks.set(timer, message.mark.name);
    } else if (message.event === 'clear') {
      // The carrier drops the audio not yet played and reports the marks it will never reach.
      playhead = at;
      for (const [timer, name] of pendingMarks) { clearTimeout(timer); echoMark(name); }
      pendingMarks.clear();
    }
  });
  await new Promise<void>((resolve, reject) => { socket.once('open', () => resolve()); socket.once('error', reject); });

  send({ event: 'connected', protocol: 'Call', version: '1.0.0' });
  send({
    event: 'start', sequenceNumber: String(sequence++), streamSid,
    start: {
      streamSid, accountSid: options.accountSid, callSid: options.carrierCallSid, tracks: ['inbound'],
      customParameters: options.parameters, mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
    },
  });
  // One frame every 20 ms against the clock (a timer drifts; the frame count follows real time).
  let framesSent = 0;
  const pump = setInterval(() => {
    const due = Math.floor(now() / FRAME_MS);
    while (framesSent < due && socket.readyState === WebSocket.OPEN) {
      const frame = speech.shift() ?? Buffer.alloc(FRAME_BYTES, SILENCE);
      if (speech.length === 0 && speechDone) { const done = speechDone; speechDone = null; done(); }
      timestamp += FRAME_MS;
      send({ event: 'media', sequenceNumber: String(sequence++), streamSid, media: { track: 'inbound', chunk: String(framesSent + 1), timestamp: String(timestamp), payload: frame.toString('base64') } });
      framesSent++;
    }
  }, 10);
  void closed.then(() => { clearInterval(pump); for (const timer of pendingMarks.keys()) clearTimeout(timer); speechDone?.(); });

  return {
    streamSid, received, outbound, now, closed,
    playhead: () => playhead,
    async say(text) {
      const audio = mulawEncode(pcm16ToSamples(await synthesizeSpeech(text, 8000)));
      const frames: Buffer[] = [];
      for (let offset = 0; offset < audio.length; offset += FRAME_BYTES) {
        const frame = Buffer.alloc(FRAME_BYTES, SILENCE);
        audio.copy(frame, 0, offset, Math.min(audio.length, offset + FRAME_BYTES));
        frames.push(frame);
      }
      await new Promise<void>((resolve) => { speech.push(...frames); speechDone = resolve; });
    },
    async waitFor(what, until, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (!until()) {
        if (Date.now() > deadline) throw new Error(`the carrier stand-in waited ${timeoutMs} ms for ${what}; the runtime sent: ${received.map((r) => r.message.event).filter((e) => e !== 'media').join(', ')}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    speechFramesSince(since) {
      return outbound.filter((frame) => frame.at >= since && frameLevel(frame.payload) > 300).length;
    },
    stop() {
      send({ event: 'stop', sequenceNumber: String(sequence++), streamSid, stop: { accountSid: options.accountSid, callSid: options.carrierCallSid } });
      socket.close(1000);
    },
  };
}
