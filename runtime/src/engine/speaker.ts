/**
 * Speaks one agent turn: sentences go to the TTS one after another as the LLM produces them, at most
 * one ahead of the sentence playing, their audio is handed to the transport (which paces it), and a
 * mark follows each sentence. It remembers where each sentence starts in the transport's audio, so
 * that on barge-in it can say how much was actually heard: whole sentences whose audio played, and
 * the played share of the one cut off.
 */
import { performance } from 'node:perf_hooks';
import type { AudioFormat, TtsProvider } from '../providers/types.ts';
import { playedPrefix } from './text.ts';
import { bytesPerSecond, sameFormat } from '../audio/convert.ts';
import { RECORDING_FORMAT, type AudioConverter, type CallTransport, type ConverterFactory } from './types.ts';

/** Sentences synthesized ahead of the one playing (see `#roomAhead`). */
const SENTENCES_AHEAD = 1;
/** Speech rate used to guess the length of a sentence whose audio is still streaming in. */
const MS_PER_CHARACTER = 60;

export interface SpeakerDeps {
  transport: CallTransport;
  tts: TtsProvider;
  voiceId: string | null;
  model: string | null;
  convert: ConverterFactory;
  /** Call time (ms since the stream started). */
  callMs(): number;
  /** Agent audio for the recording, RECORDING_FORMAT, placed at the call time it plays. */
  record?(frame: Buffer, atMs: number): void;
  markName(): string;
}

interface Sentence {
  text: string;
  /** transport.sentMs() before its first byte; null until its audio starts. */
  offsetMs: number | null;
  /** ms of its audio handed over so far. */
  audioMs: number;
  streamed: boolean;
  played: Promise<void> | null;
}

export interface UtteranceTiming {
  /** performance.now() when the first TTS request went out, and when its first byte came back. */
  ttsRequestAt: number | null;
  ttsFirstByteAt: number | null;
  /** performance.now() and call ms when the first audio went to the transport. */
  firstAudioAt: number | null;
  firstAudioCallMs: number | null;
}

export class Utterance {
  readonly #deps: SpeakerDeps;
  readonly #abort = new AbortController();
  readonly #sentences: Sentence[] = [];
  readonly #pending: Sentence[] = [];
  readonly timing: UtteranceTiming = { ttsRequestAt: null, ttsFirstByteAt: null, firstAudioAt: null, firstAudioCallMs: null };
  #running: Promise<void> | null = null;
  #failure: unknown = null;
  /** Per sentence, what the caller heard; set by a barge-in. */
  #heard: string[] | null = null;
  #characters = 0;
  onFirstAudio: (() => void) | null = null;
  readonly #aborted: Promise<void>;

  constructor(deps: SpeakerDeps) {
    this.#deps = deps;
    const signal = this.#abort.signal;
    this.#aborted = new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
  }

  get signal() { return this.#abort.signal; }
  get interrupted() { return this.#heard !== null; }
  /** Characters sent to the TTS (priced per 1000). */
  get characters() { return this.#characters; }
  get hasAudio() { return this.timing.firstAudioAt !== null; }

  say(text: string) {
    if (this.#abort.signal.aborted || !text.trim()) return;
    const sentence: Sentence = { text: text.trim(), offsetMs: null, audioMs: 0, streamed: false, played: null };
    this.#sentences.push(sentence);
    this.#pending.push(sentence);
    this.#running ??= this.#run();
  }

  /** Resolves once every sentence said so far has played (or the utterance was interrupted); throws the TTS's failure. */
  async finish(): Promise<void> {
    while (this.#running) {
      const running = this.#running;
      await running;
      if (this.#running === running) break;
    }
    if (this.#failure) throw this.#failure;
    if (this.#abort.signal.aborted) return;
    await Promise.all(this.#sentences.map((sentence) => sentence.played));
  }

  get sentenceCount() { return this.#sentences.length; }

  /** The text the caller heard (from sentence `from` on): whole sentences played, plus the played share of the cut one. */
  heardText(from = 0): string {
    const heard = this.#heard ?? this.#sentences.map((s) => (s.offsetMs === null ? '' : s.text));
    return heard.slice(from).filter(Boolean).join(' ');
  }

  /** Barge-in: decides what was heard (before the transport drops the rest), then stops TTS and playback. */
  interrupt(): string {
    if (this.#heard) return this.heardText();
    const played = this.#deps.transport.playedMs();
    this.#heard = this.#sentences.map((sentence) => {
      if (sentence.offsetMs === null || played <= sentence.offsetMs) return '';
      const length = sentence.streamed ? sentence.audioMs : Math.max(sentence.audioMs, sentence.text.length * MS_PER_CHARACTER);
      return playedPrefix(sentence.text, length > 0 ? (played - sentence.offsetMs) / length : 0);
    });
    this.#abort.abort();
    this.#deps.transport.clear();
    return this.heardText();
  }

  /** Stops without deciding what was heard (the call is over). */
  abort() { this.#abort.abort(); }

  async #run(): Promise<void> {
    try {
      while (this.#pending.length && !this.#abort.signal.aborted) {
        await this.#roomAhead();
        if (this.#abort.signal.aborted) break;
        await this.#speak(this.#pending.shift()!);
      }
    } catch (error) {
      if (!this.#abort.signal.aborted) this.#failure = error;
    } finally {
      this.#running = null;
    }
  }

  /**
   * Bounded look-ahead: the next sentence is synthesized only once the one two before it has played,
   * that is while the sentence before it plays. So a barge-in finds at most one sentence synthesized
   * (and billed) that nobody heard, where an unbounded TTS would have rendered the whole answer the
   * moment the LLM wrote it. One sentence of audio ahead is plenty to hide the TTS's first byte.
   */
  async #roomAhead() {
    const next = this.#sentences.length - this.#pending.length;
    const mustHavePlayed = this.#sentences[next - 1 - SENTENCES_AHEAD];
    if (mustHavePlayed?.played) await Promise.race([mustHavePlayed.played, this.#aborted]);
  }

  async #speak(sentence: Sentence) {
    const { transport } = this.#deps;
    this.timing.ttsRequestAt ??= performance.now();
    this.#characters += sentence.text.length;
    const result = await this.#deps.tts.synthesize({
      text: sentence.text, voiceId: this.#deps.voiceId, model: this.#deps.model, want: transport.format, signal: this.#abort.signal,
    });
    const toLeg = sameFormat(result.format, transport.format) ? null : this.#deps.convert(result.format, transport.format);
    const toRecording = this.#deps.record ? this.#deps.convert(transport.format, RECORDING_FORMAT) : null;
    try {
      for await (const chunk of result.audio) {
        if (this.#abort.signal.aborted) return;
        this.timing.ttsFirstByteAt ??= performance.now();
        this.#handOver(sentence, toLeg ? toLeg.write(chunk) : chunk, toRecording);
      }
      // The resampler's filter tail: the last few ms of the sentence.
      if (toLeg && !this.#abort.signal.aborted) this.#handOver(sentence, toLeg.end(), toRecording);
    } finally {
      toLeg?.end();
      toRecording?.end();
    }
    if (this.#abort.signal.aborted) return;
    sentence.streamed = true;
    sentence.played = sentence.offsetMs === null ? Promise.resolve() : transport.markUtteranceEnd(this.#deps.markName());
  }

  #handOver(sentence: Sentence, audio: Buffer, toRecording: AudioConverter | null) {
    const { transport } = this.#deps;
    if (audio.length === 0) return;
    if (sentence.offsetMs === null) sentence.offsetMs = transport.sentMs();
    // Audio handed over now plays after what is queued ahead of it.
    const playsAtMs = this.#deps.callMs() + Math.max(0, transport.sentMs() - transport.playedMs());
    if (this.timing.firstAudioAt === null) {
      this.timing.firstAudioAt = performance.now();
      this.timing.firstAudioCallMs = this.#deps.callMs();
      this.onFirstAudio?.();
    }
    transport.sendAudio(audio);
    sentence.audioMs += durationMs(audio, transport.format);
    if (toRecording) this.#deps.record!(toRecording.write(audio), playsAtMs);
  }
}

export function durationMs(audio: Buffer, format: AudioFormat) {
  return (audio.length * 1000) / bytesPerSecond(format);
}
