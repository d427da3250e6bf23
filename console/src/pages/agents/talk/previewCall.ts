/**
 * The browser's leg of a preview call (extensions.md §11), without React: the microphone through an
 * AudioWorklet that resamples to 16 kHz PCM (public/audio/capture-worklet.js), the runtime's WebSocket,
 * and the agent's audio (16 kHz PCM, 20 ms frames) upsampled to the context's rate and played through a
 * small jitter buffer (public/audio/playback-worklet.js). The page sees JSON events and a few counters;
 * the performance timeline gets a mark when the caller's audio starts and each time the agent's starts playing.
 */

import type { PreviewEvent } from './events.ts';

export interface PreviewCallHandlers {
  event(event: PreviewEvent): void;
  /** The socket closed: `refused` when the runtime would not take the call (policy close, 1008). */
  closed(how: { refused: boolean; reason: string }): void;
  /** Agent audio played and queued so far (ms), about ten times a second. */
  playback?(state: { playedMs: number; queuedMs: number; receivedFrames: number }): void;
}

const PCM_RATE = 16000;
/** Above this much agent audio still queued when the agent stops speaking, it was cut off: drop it. */
const FLUSH_ABOVE_MS = 250;

export class PreviewCall {
  readonly #handlers: PreviewCallHandlers;
  #context: AudioContext | null = null;
  #microphone: MediaStream | null = null;
  #player: AudioWorkletNode | null = null;
  #socket: WebSocket | null = null;
  #receivedFrames = 0;
  #queuedMs = 0;
  #last = 0; // the previous 16 kHz sample, for interpolation across frames
  #phase = 0;
  #stopped = false;

  constructor(handlers: PreviewCallHandlers) {
    this.#handlers = handlers;
  }

  /**
   * Asks for the microphone and loads the worklets; throws when the microphone is refused. Done before
   * the session is created, so a refused microphone leaves no call waiting for a browser that never comes.
   */
  async prepare(): Promise<void> {
    this.#microphone = await navigator.mediaDevices.getUserMedia({
      // Echo cancellation keeps the agent's voice from the speakers out of the microphone (it would barge in on itself).
      audio: { channelCount: 1, echoCancellation: true, noiseSuppression: true, autoGainControl: true },
    });
    const context = new AudioContext({ latencyHint: 'interactive' });
    this.#context = context;
    await Promise.all([context.audioWorklet.addModule('/audio/capture-worklet.js'), context.audioWorklet.addModule('/audio/playback-worklet.js')]);
    if (this.#stopped) return;
    const player = new AudioWorkletNode(context, 'jitter-buffer-player', { numberOfInputs: 0, outputChannelCount: [1], processorOptions: { primeMs: 80 } });
    player.port.onmessage = (event: MessageEvent<{ playedMs: number; queuedMs: number } | { startedAt: number }>) => {
      if ('startedAt' in event.data) return this.#mark('agent-audio-played', event.data.startedAt);
      this.#queuedMs = event.data.queuedMs;
      this.#handlers.playback?.({ ...event.data, receivedFrames: this.#receivedFrames });
    };
    player.connect(context.destination);
    this.#player = player;
  }

  /** Connects to the session's WebSocket and starts sending the microphone. */
  async connect(websocketUrl: string): Promise<void> {
    const context = this.#context;
    const player = this.#player;
    if (!context || !player || !this.#microphone || this.#stopped) throw new Error('The preview call was stopped');
    const socket = new WebSocket(websocketUrl);
    socket.binaryType = 'arraybuffer';
    this.#socket = socket;
    socket.onmessage = (message) => {
      if (message.data instanceof ArrayBuffer) return this.#play(message.data);
      const event = JSON.parse(String(message.data)) as PreviewEvent;
      // The agent stopped with much still queued: it was interrupted, and what it did not say is not played.
      if (event.type === 'agent_speaking' && !event.speaking && this.#queuedMs > FLUSH_ABOVE_MS) player.port.postMessage({ flush: true });
      this.#handlers.event(event);
    };
    socket.onclose = (close) => {
      this.#release();
      this.#handlers.closed({ refused: close.code === 1008, reason: close.reason });
    };
    await new Promise<void>((resolve, reject) => {
      socket.onopen = () => resolve();
      socket.onerror = () => reject(new Error('The voice runtime could not be reached'));
    });

    const source = context.createMediaStreamSource(this.#microphone);
    const capture = new AudioWorkletNode(context, 'pcm-capture', { numberOfOutputs: 0, channelCount: 1, channelCountMode: 'explicit' });
    capture.port.onmessage = (event: MessageEvent<ArrayBuffer | { startedAt: number }>) => {
      if (!(event.data instanceof ArrayBuffer)) return this.#mark('caller-audio-captured', event.data.startedAt);
      if (socket.readyState === WebSocket.OPEN) socket.send(event.data);
    };
    source.connect(capture);
    await context.resume();
  }

  /** The End button: the runtime ends the call (`user_hangup`), says `ended` and closes the socket. */
  end(): void {
    if (this.#socket?.readyState === WebSocket.OPEN) this.#socket.send(JSON.stringify({ type: 'end' }));
    else this.stop();
  }

  /** Drops everything at once (leaving the page). */
  stop(): void {
    this.#stopped = true;
    this.#socket?.close(1000);
    this.#release();
  }

  #release() {
    for (const track of this.#microphone?.getTracks() ?? []) track.stop();
    this.#microphone = null;
    if (this.#context && this.#context.state !== 'closed') void this.#context.close();
  }

  /**
   * A moment of the audio graph (context time, s) as a performance mark on the page's timeline, the
   * context time kept in its detail: `caller-audio-captured` (the capture worklet's first sample; the
   * n-th sample sent was captured n / 16000 s later) and `agent-audio-played` (each time the jitter
   * buffer starts playing the agent's audio). bench/console.ts measures the answer's delay with them.
   */
  #mark(name: string, contextTime: number) {
    const context = this.#context;
    if (!context || context.state === 'closed') return;
    // The output timestamp pairs a context time with the page time it is played at; it is zero until the output runs.
    const stamp = context.getOutputTimestamp();
    const startTime = stamp.performanceTime && stamp.contextTime !== undefined
      ? stamp.performanceTime + (contextTime - stamp.contextTime) * 1000
      : performance.now() - (context.currentTime - contextTime) * 1000;
    performance.mark(name, { startTime: Math.max(0, startTime), detail: { contextTime } });
  }

  /** A 20 ms frame of 16 kHz PCM, linearly upsampled to the context's rate, into the jitter buffer. */
  #play(data: ArrayBuffer) {
    if (!this.#context || !this.#player) return;
    this.#receivedFrames++;
    const input = new Int16Array(data);
    const step = PCM_RATE / this.#context.sampleRate; // input samples per output sample
    const output: number[] = [];
    // #phase: where the next output sample falls, from the previous frame's last sample (0) to this frame's last (input.length).
    for (; this.#phase < input.length; this.#phase += step) {
      const base = Math.floor(this.#phase);
      const a = base === 0 ? this.#last : input[base - 1]!;
      const b = input[base]!;
      output.push((a + (b - a) * (this.#phase - base)) / 0x8000);
    }
    this.#phase -= input.length;
    this.#last = input[input.length - 1] ?? 0;
    this.#player.port.postMessage(Float32Array.from(output));
  }
}
