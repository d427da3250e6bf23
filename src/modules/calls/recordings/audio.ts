/** Recording formats the runtime may upload, told apart by their first bytes, not by the header alone. */
export type AudioFormat = 'wav' | 'mp3';

export const AUDIO_CONTENT_TYPES: Record<AudioFormat, string> = { wav: 'audio/wav', mp3: 'audio/mpeg' };

const DECLARED: Record<string, AudioFormat> = {
  'audio/wav': 'wav', 'audio/x-wav': 'wav', 'audio/wave': 'wav', 'audio/vnd.wave': 'wav', 'audio/mpeg': 'mp3', 'audio/mp3': 'mp3',
};

/** The format a Content-Type header names, or undefined when it is not one we store. */
export function declaredFormat(contentType: string | undefined): AudioFormat | undefined {
  const type = contentType?.split(';')[0]?.trim().toLowerCase();
  return type ? DECLARED[type] : undefined;
}

const WAV_ENCODINGS = new Set([1, 3, 6, 7, 0xfffe]); // PCM, IEEE float, A-law, µ-law, extensible

/**
 * Checks a RIFF/WAVE header: the RIFF and WAVE tags, then a `fmt ` chunk (found by walking the
 * chunks) with a known encoding, 1-16 channels, a sample rate of 1 kHz-384 kHz and whole-byte samples.
 * Returns what is wrong, or undefined when the header is sound.
 */
export function wavHeaderProblem(head: Buffer): string | undefined {
  if (head.length < 12 || head.toString('latin1', 0, 4) !== 'RIFF' || head.toString('latin1', 8, 12) !== 'WAVE') {
    return 'it does not start with a RIFF/WAVE header';
  }
  let offset = 12;
  while (offset + 8 <= head.length) {
    const id = head.toString('latin1', offset, offset + 4);
    const size = head.readUInt32LE(offset + 4);
    if (id === 'fmt ') {
      if (size < 16 || offset + 8 + 16 > head.length) return 'its fmt chunk is truncated';
      const encoding = head.readUInt16LE(offset + 8);
      const channels = head.readUInt16LE(offset + 10);
      const sampleRate = head.readUInt32LE(offset + 12);
      const bitsPerSample = head.readUInt16LE(offset + 22);
      if (!WAV_ENCODINGS.has(encoding)) return `its encoding ${encoding} is not supported`;
      if (channels < 1 || channels > 16) return `it declares ${channels} channels`;
      if (sampleRate < 1000 || sampleRate > 384_000) return `it declares a sample rate of ${sampleRate} Hz`;
      if (bitsPerSample === 0 || bitsPerSample % 8 !== 0) return `it declares ${bitsPerSample}-bit samples`;
      return undefined;
    }
    offset += 8 + size + (size % 2); // chunks are padded to an even size
  }
  return 'it has no fmt chunk';
}

/** An MP3 starts with an ID3 tag or an MPEG audio frame sync (11 set bits). */
export function mp3HeaderProblem(head: Buffer): string | undefined {
  if (head.length >= 3 && head.toString('latin1', 0, 3) === 'ID3') return undefined;
  if (head.length >= 2 && head[0] === 0xff && (head[1]! & 0xe0) === 0xe0) return undefined;
  return 'it starts with neither an ID3 tag nor an MPEG frame';
}

export function audioProblem(format: AudioFormat, head: Buffer): string | undefined {
  return format === 'wav' ? wavHeaderProblem(head) : mp3HeaderProblem(head);
}

/** A WAV file of 16-bit PCM: the header for `dataBytes` of samples. */
export function wavHeader(dataBytes: number, sampleRate = 8000, channels = 1): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(36 + dataBytes, 4);
  header.write('WAVE', 8, 'latin1');
  header.write('fmt ', 12, 'latin1');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(channels, 22);
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * channels * 2, 28);
  header.writeUInt16LE(channels * 2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(dataBytes, 40);
  return header;
}

/** A short tone as a WAV file (demo data and tests: real audio a browser plays). */
export function toneWav(seconds: number, frequency: number, sampleRate = 8000): Buffer {
  const samples = Math.round(seconds * sampleRate);
  const data = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++) {
    const fade = Math.min(1, i / 400, (samples - i) / 400);
    data.writeInt16LE(Math.round(Math.sin((2 * Math.PI * frequency * i) / sampleRate) * 8000 * fade), i * 2);
  }
  return Buffer.concat([wavHeader(data.length, sampleRate), data]);
}
