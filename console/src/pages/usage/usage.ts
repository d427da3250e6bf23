import type { Schemas } from '../../api/client.ts';

export const GRANULARITIES = ['minute', 'hour', 'day', 'week', 'month'] as const;
export const GROUP_BYS = ['agent', 'agent_version', 'phone_number', 'status', 'end_reason', 'call_type', 'campaign', 'analysis.success', 'analysis.sentiment'] as const;

/** The metrics of GET /api/analytics/usage; the percentiles are not sums, so they have no per-group total. */
export const METRICS: Array<{ value: string; label: string; summed: boolean }> = [
  { value: 'cost', label: 'Cost (credits)', summed: true },
  { value: 'calls', label: 'Calls', summed: true },
  { value: 'duration_seconds', label: 'Duration (s)', summed: true },
  { value: 'duration_p50', label: 'Duration p50 (s)', summed: false },
  { value: 'duration_p95', label: 'Duration p95 (s)', summed: false },
  { value: 'cost_stt', label: 'Cost: speech to text', summed: true },
  { value: 'cost_llm', label: 'Cost: language model', summed: true },
  { value: 'cost_tts', label: 'Cost: text to speech', summed: true },
  { value: 'cost_telephony', label: 'Cost: telephony', summed: true },
  { value: 'cost_platform', label: 'Cost: platform', summed: true },
  // A share per bucket (extensions.md §13), not a sum: the groups have no total of it, the report's totals have.
  { value: 'success_rate', label: 'Success rate (0-1)', summed: false },
];

export type Report = Schemas['UsageReport'];
export type Series = Report['series'][number];

/** The day after a calendar day (YYYY-MM-DD). */
export function nextDay(date: string): string {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(y, m - 1, d + 1)).toISOString().slice(0, 10);
}

/** The group's value (an agent id, a status, a metadata value…), null for calls without one. */
export const groupValue = (series: Series): string | null => (series.group ? Object.values(series.group)[0] ?? null : null);

/** A metric summed over the series' buckets, rounded like the display (4 decimals) to hide float noise. */
export function seriesTotal(series: Series, metric: string): number {
  const sum = series.points.reduce((t, p) => t + ((p as Record<string, number>)[metric] ?? 0), 0);
  return Math.round(sum * 10_000) / 10_000;
}

/** How a bucket's start reads at this granularity, in the report's zone. */
export function bucketLabel(iso: string, granularity: string, timeZone: string): string {
  const at = new Date(iso);
  if (granularity === 'minute' || granularity === 'hour') {
    return at.toLocaleString(undefined, { timeZone, month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
  }
  if (granularity === 'month') return at.toLocaleDateString(undefined, { timeZone, year: 'numeric', month: 'short' });
  return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(at);
}
