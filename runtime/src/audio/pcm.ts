/** 16-bit little-endian mono PCM as Buffers (the wire) and Int16Arrays (for arithmetic). */

/** PCM16 LE bytes → samples (copied, so the result is aligned whatever the Buffer's offset). A trailing odd byte is ignored. */
export function pcm16ToSamples(bytes: Uint8Array): Int16Array {
  const count = bytes.length >> 1;
  const out = new Int16Array(count);
  const view = new DataView(bytes.buffer, bytes.byteOffset, count * 2);
  for (let i = 0; i < count; i++) out[i] = view.getInt16(i * 2, true);
  return out;
}

/** Samples → PCM16 LE bytes. */
export function samplesToPcm16(samples: Int16Array): Buffer {
  const out = Buffer.allocUnsafe(samples.length * 2);
  for (let i = 0; i < samples.length; i++) out.writeInt16LE(samples[i]!, i * 2);
  return out;
}

/** Root mean square of samples (0 for none). */
export function rms(samples: Int16Array): number {
  if (samples.length === 0) return 0;
  let sum = 0;
  for (let i = 0; i < samples.length; i++) sum += samples[i]! * samples[i]!;
  return Math.sqrt(sum / samples.length);
}

/** Silence of a duration at a rate, as samples. */
function silence(durationMs: number, sampleRate: number): Int16Array {
  return new Int16Array(Math.round((durationMs * sampleRate) / 1000));
}

export function concatSamples(parts: Int16Array[]): Int16Array {
  const total = parts.reduce((sum, part) => sum + part.length, 0);
  const out = new Int16Array(total);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

/** Splits audio bytes into frames of `frameBytes` (the last one may be shorter). */
function* frames(bytes: Buffer, frameBytes: number): Generator<Buffer> {
  for (let offset = 0; offset < bytes.length; offset += frameBytes) yield bytes.subarray(offset, offset + frameBytes);
}
