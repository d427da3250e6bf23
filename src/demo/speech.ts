import { wavHeader } from '../modules/calls/recordings/audio.ts';

/** The two voices of a demo conversation: told apart by ear (accent and pitch) as well as by channel. */
export type Speaker = 'agent' | 'user';
const VOICES: Record<Speaker, { voice: string; pitch: number; rate: number }> = {
  agent: { voice: 'en-us', pitch: 70, rate: 170 },
  user: { voice: 'en-gb-x-rp', pitch: 30, rate: 160 },
};

export const RECORDING_RATE = 8000;
/** Silence before the first turn and between turns, as on a real call. */
const LEAD_SECONDS = 0.5;
const GAP_SECONDS = 0.6;

interface ESpeakWorker {
  set_voice(name: string): number;
  set_pitch(pitch: number): void;
  set_rate(rate: number): void;
  samplerate: number;
  synthesize(text: string, callback: (samples: Int16Array | null, events: unknown[]) => number): void;
}

/**
 * eSpeak NG compiled to WASM (Emscripten), run headless in this process: each text is synthesized
 * once per voice and kept (a seed reuses a handful of conversations across many calls; synthesis
 * costs about as long as the speech on this machine).
 */
export class SpeechSynthesizer {
  private worker: Promise<ESpeakWorker> | undefined;
  private readonly cache = new Map<string, Int16Array>();

  private load(): Promise<ESpeakWorker> {
    this.worker ??= (async () => {
      const { default: createModule } = await import('@echogarden/espeak-ng-emscripten');
      const espeak = await createModule() as { eSpeakNGWorker: new () => ESpeakWorker };
      return new espeak.eSpeakNGWorker();
    })();
    return this.worker;
  }

  /** The text spoken by the speaker's voice: 16-bit mono samples at 8 kHz. */
  async speak(speaker: Speaker, text: string): Promise<Int16Array> {
    const key = `${speaker}\u0000${text}`;
    const cached = this.cache.get(key);
    if (cached) return cached;
    const worker = await this.load();
    const { voice, pitch, rate } = VOICES[speaker];
    worker.set_voice(voice);
    worker.set_pitch(pitch);
    worker.set_rate(rate);
    const chunks: Int16Array[] = [];
    worker.synthesize(text, (samples) => { if (samples && samples.length) chunks.push(samples.slice()); return 0; });
    const samples = resample(concat(chunks), worker.samplerate, RECORDING_RATE);
    this.cache.set(key, samples);
    return samples;
  }
}

function concat(chunks: Int16Array[]): Int16Array {
  const out = new Int16Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const chunk of chunks) { out.set(chunk, at); at += chunk.length; }
  return out;
}

/**
 * Down-sampling for a telephone-band recording: each output sample averages the input samples it
 * covers (a box low-pass that keeps aliasing down), which is plenty for synthesized speech.
 */
export function resample(input: Int16Array, from: number, to: number): Int16Array {
  const ratio = from / to;
  const out = new Int16Array(Math.floor(input.length / ratio));
  for (let i = 0; i < out.length; i++) {
    const start = Math.floor(i * ratio);
    const end = Math.max(start + 1, Math.floor((i + 1) * ratio));
    let sum = 0;
    for (let j = start; j < end; j++) sum += input[j]!;
    out[i] = Math.round(sum / (end - start));
  }
  return out;
}

export interface SpokenConversation {
  /** Stereo 16-bit WAV at 8 kHz: the caller on the left channel, the agent on the right. */
  wav: Buffer;
  /** Whole seconds: the recording is padded with silence to this length, which is the call's duration. */
  durationSeconds: number;
  turns: Array<{ role: Speaker; text: string; start_seconds: number }>;
}

/** A conversation spoken turn by turn, each turn's start where its speech begins in the recording. */
export async function speakConversation(synth: SpeechSynthesizer, lines: Array<{ role: Speaker; text: string }>): Promise<SpokenConversation> {
  const spoken: Array<{ role: Speaker; text: string; samples: Int16Array; at: number }> = [];
  let at = Math.round(LEAD_SECONDS * RECORDING_RATE);
  for (const line of lines) {
    const samples = await synth.speak(line.role, line.text);
    spoken.push({ ...line, samples, at });
    at += samples.length + Math.round(GAP_SECONDS * RECORDING_RATE);
  }
  const durationSeconds = Math.ceil(at / RECORDING_RATE);
  const frames = durationSeconds * RECORDING_RATE;
  const data = Buffer.alloc(frames * 4);
  for (const turn of spoken) {
    const channel = turn.role === 'user' ? 0 : 1;
    for (let i = 0; i < turn.samples.length; i++) data.writeInt16LE(turn.samples[i]!, (turn.at + i) * 4 + channel * 2);
  }
  return {
    wav: Buffer.concat([wavHeader(data.length, RECORDING_RATE, 2), data]),
    durationSeconds,
    turns: spoken.map((t) => ({ // floored: a turn never starts after its first sound
      role: t.role, text: t.text, start_seconds: Math.floor((t.at / RECORDING_RATE) * 100) / 100 })),
  };
}
