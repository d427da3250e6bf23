/**
 * Converting audio between the legs' formats and the vendors': μ-law ↔ PCM16 and any rate to any
 * rate, as a stream (chunks in, chunks out), with the Speex resampler when the rates differ.
 */
import type { AudioFormat } from '../providers/types.ts';
import { mulawDecode, mulawEncode } from './mulaw.ts';
import { pcm16ToSamples, samplesToPcm16 } from './pcm.ts';
import { Resampler } from './resampler.ts';

export interface AudioConverter {
  readonly from: AudioFormat;
  readonly to: AudioFormat;
  /** Converts a chunk (any size; a PCM16 chunk may split a sample, the odd byte is carried over). */
  write(chunk: Uint8Array): Buffer;
  /** Ends the stream: what the resampler still holds. The converter cannot be written to afterwards. */
  end(): Buffer;
}

export function sameFormat(a: AudioFormat, b: AudioFormat): boolean {
  return a.encoding === b.encoding && a.sampleRate === b.sampleRate;
}

/** Bytes per second of a format (mono). */
export function bytesPerSecond(format: AudioFormat): number {
  return format.sampleRate * (format.encoding === 'mulaw' ? 1 : 2);
}

export function decodeToSamples(bytes: Uint8Array, encoding: AudioFormat['encoding']): Int16Array {
  return encoding === 'mulaw' ? mulawDecode(bytes) : pcm16ToSamples(bytes);
}

export function encodeSamples(samples: Int16Array, encoding: AudioFormat['encoding']): Buffer {
  return encoding === 'mulaw' ? mulawEncode(samples) : samplesToPcm16(samples);
}

export function convertAudio(from: AudioFormat, to: AudioFormat): AudioConverter {
  const resampler = from.sampleRate === to.sampleRate ? null : new Resampler(from.sampleRate, to.sampleRate);
  let carry: Buffer | null = null;
  let ended = false;
  return {
    from,
    to,
    write(chunk) {
      if (ended) throw new Error('audio converter already ended');
      let bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      if (from.encoding === 'pcm16') {
        if (carry) {
          bytes = Buffer.concat([carry, bytes]);
          carry = null;
        }
        if (bytes.length % 2 === 1) {
          carry = Buffer.from(bytes.subarray(bytes.length - 1));
          bytes = bytes.subarray(0, bytes.length - 1);
        }
      }
      if (!resampler && from.encoding === to.encoding) return Buffer.from(bytes);
      const samples = decodeToSamples(bytes, from.encoding);
      return encodeSamples(resampler ? resampler.process(samples) : samples, to.encoding);
    },
    end() {
      if (ended) return Buffer.alloc(0);
      ended = true;
      return resampler ? encodeSamples(resampler.end(), to.encoding) : Buffer.alloc(0);
    },
  };
}

/** Converts a whole buffer. */
export function convertBuffer(audio: Uint8Array, from: AudioFormat, to: AudioFormat): Buffer {
  const converter = convertAudio(from, to);
  return Buffer.concat([converter.write(audio), converter.end()]);
}

/** Converts a stream of chunks (a TTS vendor's answer) as it arrives. */
export async function* convertStream(audio: AsyncIterable<Uint8Array>, from: AudioFormat, to: AudioFormat): AsyncGenerator<Buffer> {
  const converter = convertAudio(from, to);
  let ended = false;
  try {
    for await (const chunk of audio) {
      const out = converter.write(chunk);
      if (out.length > 0) yield out;
    }
    ended = true;
    const tail = converter.end();
    if (tail.length > 0) yield tail;
  } finally {
    if (!ended) converter.end();
  }
}
