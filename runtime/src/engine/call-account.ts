/**
 * What a call reports to the platform (extensions.md §10 "Reporting"): the transcript as it grows,
 * each agent turn's latency, the providers' usage, and at the end the priced final report. Reports
 * go out one at a time, in the order they were made, so the platform never sees an older transcript
 * after a newer one.
 */
import type { CallError, CallPlatform, CallReport, EndReason, TranscriptTurn } from '../platform/call-platform.ts';
import { percentile, priceUsage } from './prices.ts';
import type { Prices } from './types.ts';

interface Logger {
  warn(object: object, message?: string): void;
}

export class CallAccount {
  readonly #platform: CallPlatform;
  readonly #prices: Prices;
  /** Whether the leg is a carrier call (telephony minutes are priced); a browser preview is not. */
  readonly #telephony: boolean;
  readonly #logger: Logger | undefined;
  readonly #transcript: TranscriptTurn[] = [];
  readonly #latencies: number[] = [];
  readonly #usage = { llmInputTokens: 0, llmOutputTokens: 0, ttsCharacters: 0 };
  #reporting: Promise<void> = Promise.resolve();
  callSid: string | undefined;

  constructor(options: { platform: CallPlatform; prices: Prices; telephony: boolean; logger?: Logger }) {
    this.#platform = options.platform;
    this.#prices = options.prices;
    this.#telephony = options.telephony;
    this.#logger = options.logger;
  }

  /** A finished turn: kept, and the transcript so far reported. */
  addTurn(turn: TranscriptTurn): void {
    this.#transcript.push(turn);
    if (turn.latency) this.#latencies.push(turn.latency.total_ms);
    void this.report({});
  }

  addLlmTokens(input: number, output: number): void {
    this.#usage.llmInputTokens += input;
    this.#usage.llmOutputTokens += output;
  }

  addTtsCharacters(characters: number): void {
    this.#usage.ttsCharacters += characters;
  }

  /** The final report: end reason, duration, transcript, the priced usage and the latency percentiles. */
  final(endReason: EndReason, durationMs: number, sttSeconds: number, error?: CallError): CallReport {
    const durationSeconds = Math.round(durationMs) / 1000;
    const cost = priceUsage({ ...this.#usage, sttSeconds, telephonySeconds: this.#telephony ? durationSeconds : 0 }, this.#prices);
    return {
      status: endReason === 'error' ? 'failed' : 'completed',
      end_reason: endReason,
      duration_seconds: durationSeconds,
      transcript: this.#orderedTranscript(),
      total_cost: cost.total,
      cost_breakdown: cost.breakdown,
      latency_p50_ms: percentile(this.#latencies, 50),
      latency_p95_ms: percentile(this.#latencies, 95),
      ...(error ? { error } : {}),
    };
  }

  /** Sends a report after those before it; a progress report carries the transcript so far. A failed one is logged, not retried. */
  report(patch: CallReport): Promise<void> {
    const body = patch.status && patch.status !== 'in_progress' ? patch : { ...patch, transcript: this.#orderedTranscript() };
    if (patch.status === 'in_progress') delete body.transcript;
    this.#reporting = this.#reporting.then(() => this.#platform.report(body)).catch((error: unknown) => {
      this.#logger?.warn({ err: error, call_sid: this.callSid }, 'runtime: a report failed');
    });
    return this.#reporting;
  }

  /** Turns in the order they began (a tool turn may finish after the caller's next words began). */
  #orderedTranscript(): TranscriptTurn[] {
    return [...this.#transcript].sort((a, b) => a.start_seconds - b.start_seconds);
  }
}
