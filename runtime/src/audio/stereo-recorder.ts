/**
 * The call's recording: caller on the left, agent on the right, each frame placed at the time it
 * was heard or played (ms since the call started), so the two sides line up and the file is as long
 * as the call, silent where nobody spoke.
 */
import type { AudioFormat } from '../providers/types.ts';
import { decodeToSamples } from './convert.ts';
import { encodeWav } from './wav.ts';

class Track {
  samples = new Int16Array(0);
  length = 0;

  place(start: number, frame: Int16Array): void {
    const end = start + frame.length;
    if (end > this.samples.length) {
      const grown = new Int16Array(Math.max(end, this.samples.length * 2, 8000));
      grown.set(this.samples.subarray(0, this.length));
      this.samples = grown;
    }
    // A later frame overwrites an earlier one it overlaps (timestamps jitter by a sample or two).
    this.samples.set(frame, start);
    if (end > this.length) this.length = end;
  }
}

export class StereoRecorder {
  readonly sampleRate: number;
  private readonly caller = new Track();
  private readonly agent = new Track();

  constructor(sampleRate = 8000) {
    this.sampleRate = sampleRate;
  }

  /** A frame the caller said, `offsetMs` after the call started, in the recorder's rate (μ-law or PCM16). */
  addCaller(offsetMs: number, audio: Uint8Array, format: AudioFormat): void {
    this.caller.place(this.position(offsetMs), this.decode(audio, format));
  }

  /** A frame of the agent's speech as played to the caller, `offsetMs` after the call started. */
  addAgent(offsetMs: number, audio: Uint8Array, format: AudioFormat): void {
    this.agent.place(this.position(offsetMs), this.decode(audio, format));
  }

  /**
   * The recording as a 16-bit stereo WAV exactly `durationMs` long when given (a frame that arrived in
   * the call's last 20 ms would otherwise run past its end), else as long as the longer side.
   */
  toWav(durationMs = 0): Buffer {
    const length = durationMs > 0 ? this.position(durationMs) : Math.max(this.caller.length, this.agent.length);
    const interleaved = new Int16Array(length * 2);
    const left = this.caller.samples;
    const right = this.agent.samples;
    for (let i = 0; i < length; i++) {
      interleaved[i * 2] = i < this.caller.length ? left[i]! : 0;
      interleaved[i * 2 + 1] = i < this.agent.length ? right[i]! : 0;
    }
    return encodeWav({ sampleRate: this.sampleRate, channels: 2, samples: interleaved });
  }

  private position(offsetMs: number): number {
    return Math.max(0, Math.round((offsetMs * this.sampleRate) / 1000));
  }

  private decode(audio: Uint8Array, format: AudioFormat): Int16Array {
    if (format.sampleRate !== this.sampleRate) throw new Error(`recorder runs at ${this.sampleRate} Hz, got ${format.sampleRate} Hz (convert first)`);
    return decodeToSamples(audio, format.encoding);
  }
}
