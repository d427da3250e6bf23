/**
 * Default prices in credits (1 credit = 1 cent at the default CREDITS_PER_DOLLAR of 100). The server
 * replaces them with `PRICES_FILE`; docs/runtime.md ("Prices") lists these defaults, so
 * keep both in step.
 */
import type { CostBreakdown } from '../platform/call-platform.ts';
import type { Prices } from './types.ts';

export const DEFAULT_PRICES: Prices = {
  stt_per_minute: 1,
  llm_per_1k_input: 0.05,
  llm_per_1k_output: 0.2,
  tts_per_1k_chars: 5,
  telephony_per_minute: 1.5,
};

export interface Usage {
  sttSeconds: number;
  llmInputTokens: number;
  llmOutputTokens: number;
  ttsCharacters: number;
  /** Carrier minutes; 0 for a browser preview, which has no carrier leg. */
  telephonySeconds: number;
}

/** Credits to four decimals: the API keeps fractional credits, and sums of rounded parts must stay exact enough. */
const credits = (value: number) => Math.round(value * 10_000) / 10_000;

export function priceUsage(usage: Usage, prices: Prices): { breakdown: CostBreakdown; total: number } {
  const breakdown: CostBreakdown = {
    stt: credits((usage.sttSeconds / 60) * prices.stt_per_minute),
    llm: credits((usage.llmInputTokens / 1000) * prices.llm_per_1k_input + (usage.llmOutputTokens / 1000) * prices.llm_per_1k_output),
    tts: credits((usage.ttsCharacters / 1000) * prices.tts_per_1k_chars),
    telephony: credits((usage.telephonySeconds / 60) * prices.telephony_per_minute),
    platform: 0,
  };
  const total = credits(breakdown.stt + breakdown.llm + breakdown.tts + breakdown.telephony + breakdown.platform);
  return { breakdown, total };
}

/** Nearest-rank percentile (p in 0-100) of whole milliseconds; null when there is no sample. */
export function percentile(values: number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1]!;
}
