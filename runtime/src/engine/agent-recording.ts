/**
 * The agent's side of the recording. Agent audio is handed to the transport up to a second before it
 * plays; a barge-in throws the unplayed part away. So frames wait here until their play time has
 * passed, and the ones a `clear` dropped never reach the recorder: the recording holds what the
 * caller heard, where they heard it.
 */
import { RECORDING_FORMAT, type Recorder } from './types.ts';

const BYTES_PER_MS = (RECORDING_FORMAT.sampleRate * 2) / 1000;

export class DelayedAgentRecording {
  readonly #recorder: Recorder;
  #waiting: { frame: Buffer; atMs: number }[] = [];

  constructor(recorder: Recorder) {
    this.#recorder = recorder;
  }

  add(frame: Buffer, atMs: number) {
    this.#waiting.push({ frame, atMs });
  }

  /** Hands the recorder every frame that started playing before `nowMs`. */
  commitUntil(nowMs: number) {
    while (this.#waiting.length && this.#waiting[0]!.atMs <= nowMs) {
      const { frame, atMs } = this.#waiting.shift()!;
      this.#recorder.addAgent(atMs, frame, RECORDING_FORMAT);
    }
  }

  /** A clear at `nowMs`: what had started playing stays (cut at `nowMs`), the rest is dropped. */
  dropFrom(nowMs: number) {
    for (const { frame, atMs } of this.#waiting) {
      if (atMs >= nowMs) break;
      const keepBytes = Math.floor((nowMs - atMs) * BYTES_PER_MS) & ~1;
      this.#recorder.addAgent(atMs, frame.subarray(0, Math.min(frame.length, keepBytes)), RECORDING_FORMAT);
    }
    this.#waiting = [];
  }
}
