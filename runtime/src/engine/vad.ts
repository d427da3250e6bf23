/**
 * Voice activity detection with WebRTC's VAD (libfvad compiled to WASM): it classifies 20 ms frames of
 * 16-bit PCM as voiced or not, from spectral features rather than loudness, so line noise and a
 * loud hum do not count as speech. `SpeechSegmenter` turns the frame decisions into speech start and
 * end with a little hysteresis (a word's short pauses do not end an utterance).
 */
import createFvadModule from '@echogarden/fvad-wasm';

interface FvadModule {
  _fvad_new(): number;
  _fvad_free(instance: number): void;
  _fvad_set_mode(instance: number, mode: number): number;
  _fvad_set_sample_rate(instance: number, rate: number): number;
  _fvad_process(instance: number, frame: number, length: number): number;
  _malloc(bytes: number): number;
  _free(pointer: number): void;
  HEAP16: Int16Array;
}

let modulePromise: Promise<FvadModule> | undefined;
/** One WASM instance per process: each call's detector is a small libfvad state inside it. */
const fvadModule = () => (modulePromise ??= (createFvadModule as unknown as () => Promise<FvadModule>)());

export const VAD_FRAME_MS = 20;
/** libfvad's aggressiveness, 0-3: 2 rejects most non-speech on phone lines without losing soft speech. */
const VAD_MODE = 2;

export class VoiceActivityDetector {
  readonly #module: FvadModule;
  readonly #instance: number;
  readonly #frameSamples: number;
  readonly #pointer: number;
  #pending = Buffer.alloc(0);
  #closed = false;

  private constructor(module: FvadModule, sampleRate: number) {
    this.#module = module;
    this.#instance = module._fvad_new();
    if (!this.#instance) throw new Error('fvad_new failed');
    module._fvad_set_mode(this.#instance, VAD_MODE);
    if (module._fvad_set_sample_rate(this.#instance, sampleRate) !== 0) throw new Error(`the VAD does not take ${sampleRate} Hz`);
    this.#frameSamples = (sampleRate * VAD_FRAME_MS) / 1000;
    this.#pointer = module._malloc(this.#frameSamples * 2);
  }

  /** sampleRate 8000, 16000, 32000 or 48000 (libfvad's rates). */
  static async create(sampleRate: number): Promise<VoiceActivityDetector> {
    return new VoiceActivityDetector(await fvadModule(), sampleRate);
  }

  /** 16-bit little-endian PCM of any length → one decision per complete 20 ms frame. */
  process(pcm: Buffer): boolean[] {
    if (this.#closed) return [];
    const data = this.#pending.length ? Buffer.concat([this.#pending, pcm]) : pcm;
    const frameBytes = this.#frameSamples * 2;
    const decisions: boolean[] = [];
    let offset = 0;
    for (; offset + frameBytes <= data.length; offset += frameBytes) {
      const heap = this.#module.HEAP16;
      const base = this.#pointer >> 1;
      for (let i = 0; i < this.#frameSamples; i++) heap[base + i] = data.readInt16LE(offset + i * 2);
      decisions.push(this.#module._fvad_process(this.#instance, this.#pointer, this.#frameSamples) === 1);
    }
    this.#pending = Buffer.from(data.subarray(offset));
    return decisions;
  }

  close() {
    if (this.#closed) return;
    this.#closed = true;
    this.#module._free(this.#pointer);
    this.#module._fvad_free(this.#instance);
  }
}

export interface SegmenterOptions {
  /** Voiced time before a speech start counts (drops clicks and single syllables of noise). */
  startMs: number;
  /** Unvoiced frames in a row that cancel a speech start not yet confirmed. */
  startGapMs: number;
  /** Silence that ends an utterance. */
  endSilenceMs: number;
}

export const DEFAULT_SEGMENTER: SegmenterOptions = { startMs: 100, startGapMs: 60, endSilenceMs: 600 };

export type SegmentEvent =
  | { type: 'speech_start'; atMs: number }
  | { type: 'speech_end'; atMs: number; lastVoicedMs: number };

/**
 * Frame decisions in, speech start/end out, on the call's audio clock (ms of caller audio since the
 * stream started). `speech_start.atMs` is the first voiced frame of the run, so a consumer can measure
 * how long the caller has been speaking (barge-in needs 250 ms).
 */
export class SpeechSegmenter {
  readonly #options: SegmenterOptions;
  #speaking = false;
  #candidateStart: number | null = null;
  #unvoicedRun = 0;
  #lastVoicedEnd = 0;
  #speechStart = 0;

  constructor(options: SegmenterOptions = DEFAULT_SEGMENTER) {
    this.#options = options;
  }

  get speaking() { return this.#speaking; }
  /** Start of the current (confirmed or candidate) speech, or null. */
  get speechStartMs(): number | null { return this.#speaking ? this.#speechStart : this.#candidateStart; }
  /** ms of unvoiced audio since the last voiced frame while speaking. */
  get silenceMs() { return this.#unvoicedRun * VAD_FRAME_MS; }

  /** One 20 ms frame that starts at `atMs`. */
  frame(voiced: boolean, atMs: number): SegmentEvent | null {
    if (voiced) {
      this.#unvoicedRun = 0;
      this.#lastVoicedEnd = atMs + VAD_FRAME_MS;
      if (this.#speaking) return null;
      this.#candidateStart ??= atMs;
      if (atMs + VAD_FRAME_MS - this.#candidateStart >= this.#options.startMs) {
        this.#speaking = true;
        this.#speechStart = this.#candidateStart;
        this.#candidateStart = null;
        return { type: 'speech_start', atMs: this.#speechStart };
      }
      return null;
    }
    this.#unvoicedRun++;
    const silence = this.#unvoicedRun * VAD_FRAME_MS;
    if (!this.#speaking) {
      if (this.#candidateStart !== null && silence >= this.#options.startGapMs) this.#candidateStart = null;
      return null;
    }
    if (silence >= this.#options.endSilenceMs) return this.endNow(atMs + VAD_FRAME_MS);
    return null;
  }

  /** Ends the utterance now (the STT's endpointing said so while the caller is silent). */
  endNow(atMs: number): SegmentEvent | null {
    if (!this.#speaking) return null;
    this.#speaking = false;
    this.#candidateStart = null;
    return { type: 'speech_end', atMs, lastVoicedMs: this.#lastVoicedEnd };
  }
}
