/**
 * Durations counted in logarithmic bins, so percentiles come from rollups whatever the number of
 * calls: bin 0 holds exactly 0 s, bin 1 (0, 0.1 s), then bin k ≥ 2 holds [0.1·1.08^(k-2), 0.1·1.08^(k-1)).
 * A bin's value is its geometric middle, within 3.9% (√1.08 − 1) of any duration in it; a
 * nearest-rank percentile lies in the bin found, so the estimate is within 3.9% of the exact one.
 */
const BASE = 0.1;
const FACTOR = 1.08;
/** The last bin holds everything above a day (durations are at most 86,400 s). */
export const MAX_BIN = 2 + Math.ceil(Math.log(86_400 / BASE) / Math.log(FACTOR));

export function durationBin(seconds: number): number {
  if (!(seconds > 0)) return 0;
  if (seconds < BASE) return 1;
  return Math.min(MAX_BIN, 2 + Math.floor(Math.log(seconds / BASE) / Math.log(FACTOR)));
}

export function binValue(bin: number): number {
  if (bin <= 0) return 0;
  if (bin === 1) return BASE / 2;
  return BASE * FACTOR ** (bin - 2) * Math.sqrt(FACTOR);
}

/** Counts per bin, summed over rollup rows. */
export type Histogram = Map<number, number>;

export function addCounts(into: Histogram, lowerBound: number, counts: Array<number | null>): void {
  counts.forEach((count, i) => {
    if (count) into.set(lowerBound + i, (into.get(lowerBound + i) ?? 0) + count);
  });
}

/** The nearest-rank percentile (the smallest duration with at least p of the calls at or below it), or 0 without calls. */
export function percentile(histogram: Histogram, p: number): number {
  let total = 0;
  for (const count of histogram.values()) total += count;
  if (total === 0) return 0;
  const rank = Math.max(1, Math.ceil(p * total));
  let seen = 0;
  for (const bin of [...histogram.keys()].sort((a, b) => a - b)) {
    seen += histogram.get(bin)!;
    if (seen >= rank) return Math.round(binValue(bin) * 1000) / 1000;
  }
  return 0;
}
