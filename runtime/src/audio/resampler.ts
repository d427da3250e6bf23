/**
 * A real resampler: SpeexDSP's (the one VoIP stacks use), compiled to WASM. It filters with a
 * windowed-sinc kernel, so going down removes what the lower rate cannot hold instead of folding it
 * back as aliasing, which is what dropping samples would do.
 */
import createSpeexModule from '@echogarden/speex-resampler-wasm';

interface SpeexModule {
  _malloc(size: number): number;
  _free(pointer: number): void;
  _speex_resampler_init(channels: number, inRate: number, outRate: number, quality: number, errorPointer: number): number;
  _speex_resampler_destroy(state: number): void;
  _speex_resampler_process_int(state: number, channel: number, input: number, inLengthPointer: number, output: number, outLengthPointer: number): number;
  _speex_resampler_skip_zeros(state: number): number;
  _speex_resampler_get_input_latency(state: number): number;
  HEAP16: Int16Array;
  HEAPU32: Uint32Array;
}

const speex: SpeexModule = await (createSpeexModule as () => Promise<SpeexModule>)();

/** Speex quality 0-10; 5 is its "desktop" default: transparent for speech at a few µs per 20 ms frame. */
const QUALITY = 5;

const finalizer = new FinalizationRegistry<number[]>((pointers) => release(pointers));
function release(pointers: number[]): void {
  const [state, ...buffers] = pointers;
  if (state) speex._speex_resampler_destroy(state);
  for (const pointer of buffers) if (pointer) speex._free(pointer);
}

/** One mono stream's resampler: it keeps filter state between chunks, so chunks join without clicks. */
export class Resampler {
  readonly inRate: number;
  readonly outRate: number;
  private state: number;
  private lengths: number; // two uint32: in length, out length
  private input = 0;
  private inputCapacity = 0;
  private output = 0;
  private outputCapacity = 0;
  private pointers: number[];
  private destroyed = false;

  constructor(inRate: number, outRate: number) {
    this.inRate = inRate;
    this.outRate = outRate;
    const errorPointer = speex._malloc(4);
    this.state = speex._speex_resampler_init(1, inRate, outRate, QUALITY, errorPointer);
    speex._free(errorPointer);
    if (!this.state) throw new Error(`speex resampler refused ${inRate} → ${outRate} Hz`);
    // Without this the output starts with the filter's delay; skipping it keeps audio time-aligned.
    speex._speex_resampler_skip_zeros(this.state);
    this.lengths = speex._malloc(8);
    this.pointers = [this.state, this.lengths];
    finalizer.register(this, this.pointers, this);
  }

  /** Resamples a chunk; the result may be a few samples shorter or longer than in × ratio (the filter's state carries the rest). */
  process(samples: Int16Array): Int16Array {
    if (this.destroyed) throw new Error('resampler already ended');
    if (samples.length === 0) return new Int16Array(0);
    this.ensureCapacity(samples.length, Math.ceil((samples.length * this.outRate) / this.inRate) + 16);
    speex.HEAP16.set(samples, this.input >> 1);
    const parts: Int16Array[] = [];
    let consumed = 0;
    while (consumed < samples.length) {
      const heap32 = speex.HEAPU32;
      heap32[this.lengths >> 2] = samples.length - consumed;
      heap32[(this.lengths >> 2) + 1] = this.outputCapacity;
      const status = speex._speex_resampler_process_int(this.state, 0, this.input + consumed * 2, this.lengths, this.output, this.lengths + 4);
      if (status !== 0) throw new Error(`speex resampler error ${status}`);
      const used = speex.HEAPU32[this.lengths >> 2]!;
      const produced = speex.HEAPU32[(this.lengths >> 2) + 1]!;
      parts.push(speex.HEAP16.slice(this.output >> 1, (this.output >> 1) + produced));
      consumed += used;
      if (used === 0 && produced === 0) break;
    }
    if (parts.length === 1) return parts[0]!;
    const out = new Int16Array(parts.reduce((sum, part) => sum + part.length, 0));
    let offset = 0;
    for (const part of parts) {
      out.set(part, offset);
      offset += part.length;
    }
    return out;
  }

  /** Pushes the filter's tail out (feeding its latency in zeros) and frees the WASM memory. */
  end(): Int16Array {
    if (this.destroyed) return new Int16Array(0);
    const latency = speex._speex_resampler_get_input_latency(this.state);
    const tail = this.process(new Int16Array(latency));
    this.destroy();
    return tail;
  }

  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    finalizer.unregister(this);
    release(this.pointers);
  }

  private ensureCapacity(inputSamples: number, outputSamples: number): void {
    if (inputSamples > this.inputCapacity) {
      if (this.input) speex._free(this.input);
      this.inputCapacity = Math.max(inputSamples, 1024);
      this.input = speex._malloc(this.inputCapacity * 2);
    }
    if (outputSamples > this.outputCapacity) {
      if (this.output) speex._free(this.output);
      this.outputCapacity = Math.max(outputSamples, 1024);
      this.output = speex._malloc(this.outputCapacity * 2);
    }
    this.pointers.length = 2;
    this.pointers.push(this.input, this.output);
  }
}

/** Resamples a whole signal in one go (tail included). */
export function resample(samples: Int16Array, inRate: number, outRate: number): Int16Array {
  if (inRate === outRate) return samples.slice();
  const resampler = new Resampler(inRate, outRate);
  const body = resampler.process(samples);
  const tail = resampler.end();
  const out = new Int16Array(body.length + tail.length);
  out.set(body);
  out.set(tail, body.length);
  return out;
}
