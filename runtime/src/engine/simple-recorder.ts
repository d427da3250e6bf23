/**
 * A plain stereo recorder (caller left, agent right, 16-bit 8 kHz), good enough to run the engine and
 * its tests on its own; the audio layer's recorder (runtime/src/audio) takes its place where the
 * runtime is composed. Each party's samples are placed at their call time, so silence between
 * turns stays silence and the two channels stay aligned.
 */
import { RECORDING_FORMAT, type Recorder } from './types.ts';

class Channel {
  samples = new Int16Array(RECORDING_FORMAT.sampleRate * 10);
  length = 0;

  place(frame: Buffer, atMs: number) {
    const start = Math.max(0, Math.round((atMs * RECORDING_FORMAT.sampleRate) / 1000));
    const count = frame.length >> 1;
    this.#grow(start + count);
    for (let i = 0; i < count; i++) {
      const mixed = this.samples[start + i]! + frame.readInt16LE(i * 2);
      this.samples[start + i] = Math.max(-32768, Math.min(32767, mixed));
    }
    this.length = Math.max(this.length, start + count);
  }

  #grow(size: number) {
    if (size <= this.samples.length) return;
    const next = new Int16Array(Math.max(size, this.samples.length * 2));
    next.set(this.samples);
    this.samples = next;
  }
}

export class SimpleStereoRecorder implements Recorder {
  readonly #left = new Channel();
  readonly #right = new Channel();

  caller(frame: Buffer, atMs: number) { this.#left.place(frame, atMs); }
  agent(frame: Buffer, atMs: number) { this.#right.place(frame, atMs); }

  finish(durationMs: number): Buffer {
    const frames = Math.round((durationMs * RECORDING_FORMAT.sampleRate) / 1000);
    const data = Buffer.alloc(frames * 4);
    for (let i = 0; i < frames; i++) {
      data.writeInt16LE(i < this.#left.length ? this.#left.samples[i]! : 0, i * 4);
      data.writeInt16LE(i < this.#right.length ? this.#right.samples[i]! : 0, i * 4 + 2);
    }
    return Buffer.concat([wavHeader(data.length, 2, RECORDING_FORMAT.sampleRate), data]);
  }
}

export function wavHeader(dataBytes: number, channels: number, sampleRate: number): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + dataBytes, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(channels, 22);
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * channels * 2, 28);
  header.writeUInt16LE(channels * 2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(dataBytes, 40);
  return header;
}
