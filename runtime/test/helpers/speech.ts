/**
 * Real synthesized speech for the tests: eSpeak NG compiled to WASM speaks the text (22 050 Hz),
 * the Speex resampler brings it to the leg's rate. The caller's audio in every test is speech made
 * here, never silence or a tone standing for it. Results are cached in memory and on disk (the
 * synthesizer takes seconds to load; a cached phrase takes none).
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import createEspeak from '@echogarden/espeak-ng-emscripten';
import { basicConverter, loadBasicConverter, pcmToMulaw } from '../../src/engine/basic-audio.ts';
import type { AudioFormat } from '../../src/providers/types.ts';

const CACHE_DIR = join(tmpdir(), 'switchboard-runtime-speech');
const ESPEAK_RATE = 22_050;

interface EspeakWorker {
  set_voice(name: string): void;
  set_rate(wordsPerMinute: number): void;
  synthesize(text: string, callback: (samples: Int16Array, events: unknown[]) => number): void;
}

let worker: Promise<EspeakWorker> | undefined;
const espeak = () => (worker ??= (async () => {
  const module = await (createEspeak as unknown as () => Promise<{ eSpeakNGWorker: new () => EspeakWorker }>)();
  const instance = new module.eSpeakNGWorker();
  instance.set_voice('en-us');
  return instance;
})());

const memory = new Map<string, Buffer>();

/** 16-bit little-endian mono PCM of `text` spoken at `sampleRate`. */
export async function speechPcm(text: string, sampleRate: number): Promise<Buffer> {
  const key = createHash('sha256').update(`v1|${sampleRate}|${text}`).digest('hex').slice(0, 24);
  const cached = memory.get(key);
  if (cached) return cached;
  const file = join(CACHE_DIR, `${key}.pcm`);
  let pcm: Buffer;
  try {
    pcm = readFileSync(file);
  } catch {
    const synthesizer = await espeak();
    const parts: Buffer[] = [];
    synthesizer.synthesize(text, (samples) => { parts.push(Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength)); return 0; });
    const raw = Buffer.concat(parts.map((part) => Buffer.from(part)));
    await loadBasicConverter();
    pcm = basicConverter({ encoding: 'pcm16', sampleRate: ESPEAK_RATE }, { encoding: 'pcm16', sampleRate }).convert(raw);
    mkdirSync(CACHE_DIR, { recursive: true });
    writeFileSync(file, pcm);
  }
  memory.set(key, pcm);
  return pcm;
}

/** `text` spoken in `format`, in 20 ms frames (the last one padded with silence). */
export async function speechFrames(text: string, format: AudioFormat): Promise<Buffer[]> {
  const pcm = await speechPcm(text, format.sampleRate);
  const audio = format.encoding === 'mulaw' ? pcmToMulaw(pcm) : pcm;
  const frameBytes = (format.sampleRate / 50) * (format.encoding === 'mulaw' ? 1 : 2);
  const frames: Buffer[] = [];
  for (let offset = 0; offset < audio.length; offset += frameBytes) {
    const frame = Buffer.alloc(frameBytes, format.encoding === 'mulaw' ? 0xff : 0);
    audio.copy(frame, 0, offset, Math.min(audio.length, offset + frameBytes));
    frames.push(frame);
  }
  return frames;
}

/** A 20 ms frame of line silence (what a phone line carries between words). */
export function silenceFrame(format: AudioFormat): Buffer {
  return format.encoding === 'mulaw' ? Buffer.alloc(format.sampleRate / 50, 0xff) : Buffer.alloc((format.sampleRate / 50) * 2, 0);
}

export const framesMs = (frames: Buffer[]) => frames.length * 20;
