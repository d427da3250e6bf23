/** Credits are kept to 4 decimals (numeric(16,4)); amounts are rounded the same way before comparing. */
export function roundCredits(value: number): number {
  return Math.round(value * 10_000) / 10_000;
}
