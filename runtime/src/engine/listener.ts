/**
 * The caller's side of the call: every frame goes to the STT (vendors endpoint on silence too), to the
 * recording, and through the voice activity detector. The VAD decides when speech starts (for
 * barge-in) and, with the STT's own end-of-utterance signal, when the caller's turn ends.
 */
import { performance } from 'node:perf_hooks';
import type { AudioFormat, SttStream } from '../providers/types.ts';
import { sameFormat } from '../audio/convert.ts';
import { durationMs } from './speaker.ts';
import { RECORDING_FORMAT, type AudioConverter, type ConverterFactory } from './types.ts';
import { DEFAULT_SEGMENTER, SpeechSegmenter, VAD_FRAME_MS, type SegmenterOptions, VoiceActivityDetector } from './vad.ts';

/** Silence after which the STT's endpointing may end the turn before the VAD's own window. */
const STT_ENDPOINT_MIN_SILENCE_MS = 100;

export interface CallerTurn {
  /** Call ms of the first voiced frame and the end of the last one. */
  startMs: number;
  endMs: number;
  /** performance.now() when the turn's end was decided: "end of the caller's speech" for latency. */
  decidedAt: number;
}

export interface ListenerEvents {
  speechStart(atMs: number): void;
  /** While speech lasts: ms since it started (barge-in needs 250). */
  speaking(forMs: number): void;
  turnEnd(turn: CallerTurn): void;
}

export class CallerListener {
  readonly #format: AudioFormat;
  readonly #stt: SttStream;
  readonly #vad: VoiceActivityDetector;
  readonly #segmenter: SpeechSegmenter;
  readonly #toStt: AudioConverter | null;
  readonly #toVad: AudioConverter | null;
  readonly #toRecording: AudioConverter | null;
  readonly #record: ((frame: Buffer, atMs: number) => void) | null;
  readonly #events: ListenerEvents;
  #audioMs = 0;
  #vadMs = 0;
  /** The segmenter forgets where speech started once it ends; the turn needs it. */
  #speechStart = 0;

  private constructor(parts: {
    format: AudioFormat; stt: SttStream; vad: VoiceActivityDetector; vadFormat: AudioFormat; convert: ConverterFactory;
    record: ((frame: Buffer, atMs: number) => void) | null; events: ListenerEvents; segmenter?: SegmenterOptions;
  }) {
    this.#format = parts.format;
    this.#stt = parts.stt;
    this.#vad = parts.vad;
    this.#segmenter = new SpeechSegmenter(parts.segmenter ?? DEFAULT_SEGMENTER);
    this.#toStt = sameFormat(parts.format, parts.stt.format) ? null : parts.convert(parts.format, parts.stt.format);
    this.#toVad = sameFormat(parts.format, parts.vadFormat) ? null : parts.convert(parts.format, parts.vadFormat);
    this.#record = parts.record;
    this.#toRecording = parts.record ? parts.convert(parts.format, RECORDING_FORMAT) : null;
    this.#events = parts.events;
  }

  static async create(options: {
    format: AudioFormat; stt: SttStream; convert: ConverterFactory; events: ListenerEvents;
    record: ((frame: Buffer, atMs: number) => void) | null; segmenter?: SegmenterOptions;
  }): Promise<CallerListener> {
    // libfvad takes 8, 16, 32 or 48 kHz PCM: the leg's own rate where it is one of them.
    const rate = [8000, 16000, 32000, 48000].includes(options.format.sampleRate) ? options.format.sampleRate : 16000;
    const vad = await VoiceActivityDetector.create(rate);
    return new CallerListener({ ...options, vad, vadFormat: { encoding: 'pcm16', sampleRate: rate } });
  }

  /** ms of caller audio received: the call's audio clock. */
  get audioMs() { return this.#audioMs; }
  get speaking() { return this.#segmenter.speaking; }

  audio(frame: Buffer) {
    const atMs = this.#audioMs;
    this.#audioMs += durationMs(frame, this.#format);
    this.#stt.write(this.#toStt ? this.#toStt.write(frame) : frame);
    if (this.#toRecording) this.#record!(this.#toRecording.write(frame), atMs);
    for (const voiced of this.#vad.process(this.#toVad ? this.#toVad.write(frame) : frame)) {
      const frameAt = this.#vadMs;
      this.#vadMs += VAD_FRAME_MS;
      const event = this.#segmenter.frame(voiced, frameAt);
      if (event?.type === 'speech_start') {
        this.#speechStart = event.atMs;
        this.#events.speechStart(event.atMs);
      }
      if (event?.type === 'speech_end') this.#ended(event.lastVoicedMs);
      if (this.#segmenter.speaking) this.#events.speaking(this.#vadMs - this.#segmenter.speechStartMs!);
    }
  }

  /** The STT's endpointing: ends the turn now if the caller is already silent. */
  sttEndOfUtterance() {
    if (!this.#segmenter.speaking || this.#segmenter.silenceMs < STT_ENDPOINT_MIN_SILENCE_MS) return;
    const event = this.#segmenter.endNow(this.#vadMs);
    if (event?.type === 'speech_end') this.#ended(event.lastVoicedMs);
  }

  #ended(lastVoicedMs: number) {
    this.#events.turnEnd({ startMs: this.#speechStart, endMs: lastVoicedMs, decidedAt: performance.now() });
  }

  close() {
    this.#vad.close();
    // Frees the resamplers' WASM memory now rather than whenever the collector gets to it.
    for (const converter of [this.#toStt, this.#toVad, this.#toRecording]) converter?.end();
  }
}
