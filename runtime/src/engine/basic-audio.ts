/**
 * A complete `ConverterFactory` of the engine's own: G.711 μ-law ⇄ 16-bit PCM and resampling with the
 * Speex resampler (WASM), streaming with state across chunks. It lets the engine and its tests run on
 * their own; the audio layer's converter (runtime/src/audio) is meant to take its place where the
 * runtime is composed, behind the same interface.
 */
import createSpeexModule from '@echogarden/speex-resampler-wasm';
import type { AudioFormat } from '../providers/types.ts';
import type { AudioConverter, ConverterFactory } from './types.ts';

export function mulawToPcm(mulaw: Buffer): Buffer {
  const pcm = Buffer.alloc(mulaw.length * 2);
  for (let i = 0; i < mulaw.length; i++) pcm.writeInt16LE(MULAW_DECODE[mulaw[i]!]!, i * 2);
  return pcm;
}

export function pcmToMulaw(pcm: Buffer): Buffer {
  const out = Buffer.alloc(pcm.length >> 1);
  for (let i = 0; i < out.length; i++) out[i] = encodeSample(pcm.readInt16LE(i * 2));
  return out;
}

const MULAW_DECODE = Int16Array.from({ length: 256 }, (_, byte) => {
  const u = ~byte & 0xff;
  const exponent = (u >> 4) & 0x07;
  const magnitude = ((((u & 0x0f) << 3) + 0x84) << exponent) - 0x84;
  return u & 0x80 ? -magnitude : magnitude;
});

function encodeSample(sample: number): number {
  const BIAS = 0x84;
  const sign = sample < 0 ? 0x80 : 0;
  let magnitude = Math.min(Math.abs(sample), 32635) + BIAS;
  let exponent = 7;
  for (let mask = 0x4000; (magnitude & mask) === 0 && exponent > 0; mask >>= 1) exponent--;
  const mantissa = (magnitude >> (exponent + 3)) & 0x0f;
  return ~(sign | (exponent << 4) | mantissa) & 0xff;
}

interface SpeexModule {
  _speex_resampler_init(channels: number, inRate: number, outRate: number, quality: number, errorPointer: number): number;
  _speex_resampler_process_int(state: number, channel: number, input: number, inLength: number, output: number, outLength: number): number;
  _speex_resampler_destroy(state: number): void;
  _malloc(bytes: number): number;
  _free(pointer: number): void;
  HEAP16: Int16Array;
  HEAPU32: Uint32Array;
}

/** Speex quality 0-10; 5 is its "default" (VoIP) setting, transparent for speech at telephone rates. */
const SPEEX_QUALITY = 5;

let speex: SpeexModule | null = null;
/** Loads the resampler's WASM once; the factory is synchronous afterwards. */
export async function loadBasicConverter(): Promise<ConverterFactory> {
  speex ??= await (createSpeexModule as unknown as () => Promise<SpeexModule>)();
  return basicConverter;
}

/** A converter has no close(): the resampler's WASM state is freed once its converter is garbage. */
const resamplerStates = new FinalizationRegistry<number>((state) => speex?._speex_resampler_destroy(state));

class SpeexResampler {
  readonly #state: number;
  readonly #module: SpeexModule;
  constructor(module: SpeexModule, from: number, to: number) {
    this.#module = module;
    this.#state = module._speex_resampler_init(1, from, to, SPEEX_QUALITY, 0);
    if (!this.#state) throw new Error(`the resampler cannot convert ${from} Hz to ${to} Hz`);
    resamplerStates.register(this, this.#state);
  }

  process(pcm: Buffer, ratio: number): Buffer {
    const m = this.#module;
    const inSamples = pcm.length >> 1;
    const outCapacity = Math.ceil(inSamples * ratio) + 64;
    const input = m._malloc(inSamples * 2);
    const output = m._malloc(outCapacity * 2);
    const lengths = m._malloc(8);
    try {
      for (let i = 0; i < inSamples; i++) m.HEAP16[(input >> 1) + i] = pcm.readInt16LE(i * 2);
      m.HEAPU32[lengths >> 2] = inSamples;
      m.HEAPU32[(lengths >> 2) + 1] = outCapacity;
      m._speex_resampler_process_int(this.#state, 0, input, lengths, output, lengths + 4);
      const produced = m.HEAPU32[(lengths >> 2) + 1]!;
      const out = Buffer.alloc(produced * 2);
      for (let i = 0; i < produced; i++) out.writeInt16LE(m.HEAP16[(output >> 1) + i]!, i * 2);
      return out;
    } finally {
      m._free(input);
      m._free(output);
      m._free(lengths);
    }
  }
}

export const basicConverter: ConverterFactory = (from: AudioFormat, to: AudioFormat): AudioConverter => {
  if (!speex && from.sampleRate !== to.sampleRate) throw new Error('loadBasicConverter() first');
  const resampler = from.sampleRate === to.sampleRate ? null : new SpeexResampler(speex!, from.sampleRate, to.sampleRate);
  const ratio = to.sampleRate / from.sampleRate;
  return {
    convert(chunk: Buffer): Buffer {
      let pcm = from.encoding === 'mulaw' ? mulawToPcm(chunk) : chunk;
      if (resampler) pcm = resampler.process(pcm, ratio);
      return to.encoding === 'mulaw' ? pcmToMulaw(pcm) : pcm;
    },
  };
};
