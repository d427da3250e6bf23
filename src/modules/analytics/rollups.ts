/** The grains and buckets of call_rollups (the daily series); ALL_AGENTS is the organization's row beside each agent's. */
export const ALL_AGENTS = '*';
export const MINUTE_MS = 60_000;
export const QUARTER_MS = 15 * MINUTE_MS;
export const HOUR_MS = 60 * MINUTE_MS;

/** Rollup grains, finest first. */
export const GRAINS = { minute: MINUTE_MS, quarter: QUARTER_MS, hour: HOUR_MS } as const;

export function floorTo(at: Date, stepMs: number): Date {
  return new Date(Math.floor(at.getTime() / stepMs) * stepMs);
}
