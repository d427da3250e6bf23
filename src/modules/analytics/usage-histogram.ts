/**
 * Values counted in logarithmic bins, so percentiles come from rollups whatever the number of
 * calls: bin 0 holds exactly 0, bin 1 (0, base), then bin k ≥ 2 holds [base·1.08^(k-2), base·1.08^(k-1)).
 * A bin's value is its geometric middle, within 3.9% (√1.08 − 1) of any value in it; a
 * nearest-rank percentile lies in the bin found, so the estimate is within 3.9% of the exact one.
 * Durations use base 0.1 s up to a day; turn latencies (ms) base 1 ms up to ten minutes.
 */
export const FACTOR = 1.08;

export interface BinScale {
  base: number;
  /** The last bin holds everything above the scale's largest value. */
  maxBin: number;
}

const scaleUpTo = (base: number, largest: number): BinScale => ({ base, maxBin: 2 + Math.ceil(Math.log(largest / base) / Math.log(FACTOR)) });
export const DURATION_SCALE = scaleUpTo(0.1, 86_400);
export const LATENCY_SCALE = scaleUpTo(1, 600_000);

export function binOf(value: number, scale: BinScale = DURATION_SCALE): number {
  if (!(value > 0)) return 0;
  if (value < scale.base) return 1;
  return Math.min(scale.maxBin, 2 + Math.floor(Math.log(value / scale.base) / Math.log(FACTOR)));
}

export const durationBin = (seconds: number) => binOf(seconds, DURATION_SCALE);

export function binValue(bin: number, scale: BinScale = DURATION_SCALE): number {
  if (bin <= 0) return 0;
  if (bin === 1) return scale.base / 2;
  return scale.base * FACTOR ** (bin - 2) * Math.sqrt(FACTOR);
}

/** Counts per bin, summed over rollup rows. */
export type Histogram = Map<number, number>;

export function addCounts(into: Histogram, lowerBound: number, counts: Array<number | null>): void {
  counts.forEach((count, i) => {
    if (count) into.set(lowerBound + i, (into.get(lowerBound + i) ?? 0) + count);
  });
}

/** The nearest-rank percentile (the smallest value with at least p of the counted at or below it), or 0 when nothing is counted. */
export function percentile(histogram: Histogram, p: number, scale: BinScale = DURATION_SCALE): number {
  let total = 0;
  for (const count of histogram.values()) total += count;
  if (total === 0) return 0;
  const rank = Math.max(1, Math.ceil(p * total));
  let seen = 0;
  for (const bin of [...histogram.keys()].sort((a, b) => a - b)) {
    seen += histogram.get(bin)!;
    if (seen >= rank) return Math.round(binValue(bin, scale) * 1000) / 1000;
  }
  return 0;
}
