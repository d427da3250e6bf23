/** RIFF/WAVE, 16-bit PCM (format 1), mono or interleaved stereo. */

export interface WavAudio {
  sampleRate: number;
  channels: number;
  /** Interleaved samples (left, right, left, … for stereo). */
  samples: Int16Array;
}

export function encodeWav({ sampleRate, channels, samples }: WavAudio): Buffer {
  const dataBytes = samples.length * 2;
  const out = Buffer.allocUnsafe(44 + dataBytes);
  out.write('RIFF', 0, 'ascii');
  out.writeUInt32LE(36 + dataBytes, 4);
  out.write('WAVE', 8, 'ascii');
  out.write('fmt ', 12, 'ascii');
  out.writeUInt32LE(16, 16); // fmt chunk size
  out.writeUInt16LE(1, 20); // PCM
  out.writeUInt16LE(channels, 22);
  out.writeUInt32LE(sampleRate, 24);
  out.writeUInt32LE(sampleRate * channels * 2, 28); // byte rate
  out.writeUInt16LE(channels * 2, 32); // block align
  out.writeUInt16LE(16, 34); // bits per sample
  out.write('data', 36, 'ascii');
  out.writeUInt32LE(dataBytes, 40);
  for (let i = 0; i < samples.length; i++) out.writeInt16LE(samples[i]!, 44 + i * 2);
  return out;
}

/** Reads a 16-bit PCM WAV (skipping chunks other than fmt and data); throws on anything else. */
export function decodeWav(bytes: Buffer): WavAudio {
  if (bytes.length < 12 || bytes.toString('ascii', 0, 4) !== 'RIFF' || bytes.toString('ascii', 8, 12) !== 'WAVE') throw new Error('not a RIFF/WAVE file');
  let offset = 12;
  let format: { channels: number; sampleRate: number; bits: number; code: number } | null = null;
  while (offset + 8 <= bytes.length) {
    const id = bytes.toString('ascii', offset, offset + 4);
    const size = bytes.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (id === 'fmt ') {
      format = { code: bytes.readUInt16LE(body), channels: bytes.readUInt16LE(body + 2), sampleRate: bytes.readUInt32LE(body + 4), bits: bytes.readUInt16LE(body + 14) };
    } else if (id === 'data') {
      if (!format) throw new Error('WAV data before fmt');
      if (format.code !== 1 || format.bits !== 16) throw new Error(`unsupported WAV: format ${format.code}, ${format.bits} bits`);
      const end = Math.min(bytes.length, body + size);
      const count = (end - body) >> 1;
      const samples = new Int16Array(count);
      for (let i = 0; i < count; i++) samples[i] = bytes.readInt16LE(body + i * 2);
      return { sampleRate: format.sampleRate, channels: format.channels, samples };
    }
    offset = body + size + (size % 2);
  }
  throw new Error('WAV without data chunk');
}
