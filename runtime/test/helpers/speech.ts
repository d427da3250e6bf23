/**
 * Real synthesized speech for the tests: the audio layer's eSpeak NG synthesizer
 * (`src/audio/synthesize.ts`, WASM) speaks the text at the leg's rate. The caller's audio in every
 * test is speech made here, never silence or a tone standing for it. Results are also cached on disk
 * (each test file is its own process, and the synthesizer takes seconds to load; a cached phrase
 * takes none).
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bytesPerSecond, convertBuffer } from '../../src/audio/convert.ts';
import { MULAW_SILENCE } from '../../src/audio/mulaw.ts';
import { synthesizeSpeech } from '../../src/audio/synthesize.ts';
import type { AudioFormat } from '../../src/providers/types.ts';

const CACHE_DIR = join(tmpdir(), 'switchboard-runtime-speech');
const memory = new Map<string, Buffer>();

/** 16-bit little-endian mono PCM of `text` spoken at `sampleRate`. */
export async function speechPcm(text: string, sampleRate: number): Promise<Buffer> {
  const key = createHash('sha256').update(`v2|${sampleRate}|${text}`).digest('hex').slice(0, 24);
  const cached = memory.get(key);
  if (cached) return cached;
  const file = join(CACHE_DIR, `${key}.pcm`);
  let pcm: Buffer;
  try {
    pcm = readFileSync(file);
  } catch {
    pcm = await synthesizeSpeech(text, sampleRate);
    mkdirSync(CACHE_DIR, { recursive: true });
    // Written aside and renamed: the suite's shards share the cache, and none may read half a file.
    const partial = `${file}.${process.pid}.tmp`;
    writeFileSync(partial, pcm);
    renameSync(partial, file);
  }
  memory.set(key, pcm);
  return pcm;
}

/** PCM16 at the format's rate in the format's encoding. */
export function encodeFor(pcm: Buffer, format: AudioFormat): Buffer {
  return format.encoding === 'mulaw' ? convertBuffer(pcm, { encoding: 'pcm16', sampleRate: format.sampleRate }, format) : pcm;
}

/** `text` spoken in `format`, in 20 ms frames (the last one padded with silence). */
export async function speechFrames(text: string, format: AudioFormat): Promise<Buffer[]> {
  const pcm = await speechPcm(text, format.sampleRate);
  const audio = encodeFor(pcm, format);
  const frameBytes = bytesPerSecond(format) / 50;
  const frames: Buffer[] = [];
  for (let offset = 0; offset < audio.length; offset += frameBytes) {
    const frame = Buffer.alloc(frameBytes, format.encoding === 'mulaw' ? MULAW_SILENCE : 0);
    audio.copy(frame, 0, offset, Math.min(audio.length, offset + frameBytes));
    frames.push(frame);
  }
  return frames;
}

/** A 20 ms frame of line silence (what a phone line carries between words). */
export function silenceFrame(format: AudioFormat): Buffer {
  return Buffer.alloc(bytesPerSecond(format) / 50, format.encoding === 'mulaw' ? MULAW_SILENCE : 0);
}

export const framesMs = (frames: Buffer[]) => frames.length * 20;
