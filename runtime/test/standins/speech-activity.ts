/**
 * The STT stand-ins cannot recognize speech, but they hear it: received audio is decoded (μ-law or
 * PCM16) and measured in 10 ms steps, so an utterance's start and end are timed from the real
 * audio, in audio time (a test may send faster than real time).
 */
import { decodeToSamples } from '../../src/audio/convert.ts';
import { rms } from '../../src/audio/pcm.ts';
import type { AudioFormat } from '../../src/providers/types.ts';

/** RMS above this (about -40 dBFS) is speech: eSpeak's voice sits far above, carrier silence far below. */
export const SPEECH_RMS = 330;

export class SpeechActivity {
  private readonly format: AudioFormat;
  private readonly stepSamples: number;
  private leftover = new Int16Array(0);
  /** Audio heard so far, ms. */
  heardMs = 0;
  /** Speech heard in the current utterance, ms (0 when none is open). */
  speechMs = 0;
  /** Silence since the utterance's last speech, ms. */
  silenceMs = 0;

  constructor(format: AudioFormat) {
    this.format = format;
    this.stepSamples = format.sampleRate / 100;
  }

  /** Feeds audio; calls `onStep` after each 10 ms step with whether it was speech. */
  feed(bytes: Buffer, onStep: (speech: boolean) => void): void {
    const decoded = decodeToSamples(bytes, this.format.encoding);
    const samples = new Int16Array(this.leftover.length + decoded.length);
    samples.set(this.leftover);
    samples.set(decoded, this.leftover.length);
    let offset = 0;
    for (; offset + this.stepSamples <= samples.length; offset += this.stepSamples) {
      const speech = rms(samples.subarray(offset, offset + this.stepSamples)) > SPEECH_RMS;
      this.heardMs += 10;
      if (speech) {
        this.speechMs += 10;
        this.silenceMs = 0;
      } else if (this.speechMs > 0) this.silenceMs += 10;
      onStep(speech);
    }
    this.leftover = samples.slice(offset);
  }

  /** Closes the utterance (after a final answer). */
  reset(): void {
    this.speechMs = 0;
    this.silenceMs = 0;
  }
}

/** The caller's scripted words: the stand-ins answer with the next phrase when they hear speech. */
export class PhraseQueue {
  private readonly phrases: string[] = [];
  say(...phrases: string[]): void {
    this.phrases.push(...phrases);
  }
  next(): string {
    return this.phrases.shift() ?? '';
  }
  peek(): string {
    return this.phrases[0] ?? '';
  }
}

/** The words of a phrase revealed after `speechMs` of speech (interim results grow as the caller talks). */
export function interimWords(phrase: string, speechMs: number): string {
  const words = phrase.split(/\s+/).filter(Boolean);
  const shown = Math.min(words.length, Math.max(1, Math.floor(speechMs / 300) + 1));
  return words.slice(0, shown).join(' ');
}
