import type { Static } from 'typebox';
import type { Database } from '../../db/database.ts';
import { Errors } from '../../core/errors.ts';
import { isTimeZone, parseInstant } from '../../core/time-zones.ts';
import { addCounts, DURATION_SCALE, LATENCY_SCALE, percentile, type Histogram } from './usage-histogram.ts';
import { byKey, usageQueries } from './usage-queries.ts';
import { bucketBoundaries, DAY_MS, grainFor, type Granularity } from './usage-periods.ts';
import { GROUP_FIELDS, USAGE_METRICS, type UsageMetric, type UsagePoint, type UsageQuery, type UsageReport } from './usage-schemas.ts';

type Query = Static<typeof UsageQuery>;
type Report = Static<typeof UsageReport>;
type Point = Static<typeof UsagePoint>;

/** Sums are kept in ten-thousandths (credits have four decimals; durations are rounded to them): integers add up exactly. */
const SCALE = 10_000;
const SUMMED = ['calls', 'duration_seconds', 'cost', 'cost_stt', 'cost_llm', 'cost_tts', 'cost_telephony', 'cost_platform', 'judged', 'succeeded'] as const;
type Summed = (typeof SUMMED)[number];
type Sums = Record<Summed, number>;

const scaled = (value: string | number | null) => Math.round(Number(value ?? 0) * SCALE);
const zero = (): Sums => ({ calls: 0, duration_seconds: 0, cost: 0, cost_stt: 0, cost_llm: 0, cost_tts: 0, cost_telephony: 0, cost_platform: 0, judged: 0, succeeded: 0 });
const invalid = (field: string, message: string) => Errors.validation(`Invalid ${field}`, [{ path: `querystring.${field}`, message }]);

/** The percentile metrics: which histogram, which rank, which bins. */
const PERCENTILES = {
  duration_p50: { histogram: 'duration', p: 0.5 }, duration_p95: { histogram: 'duration', p: 0.95 },
  latency_p50: { histogram: 'latency', p: 0.5 }, latency_p95: { histogram: 'latency', p: 0.95 },
} as const;
type Kind = 'duration' | 'latency';
const SCALES = { duration: DURATION_SCALE, latency: LATENCY_SCALE } as const;

/**
 * GET /api/analytics/usage: sums per bucket of the zone and per group, every bucket present. Groups
 * backed by rollups read call_usage_rollups at the coarsest grain the buckets allow (UTC days, hours,
 * quarters or minutes), so the cost depends on the period and the groups, not on the number of calls;
 * metadata.<key> reads the ended calls of the period. Totals are the sums of the groups, exactly.
 */
export class UsageAnalytics {
  readonly #database: Pick<Database, 'prepared' | 'planned'>;
  constructor(database: Pick<Database, 'prepared' | 'planned'>) {
    this.#database = database;
  }

  async report(orgId: string, query: Query): Promise<Report> {
    const tz = query.timezone;
    if (!isTimeZone(tz)) throw invalid('timezone', 'is not an IANA time zone');
    const granularity = query.granularity as Granularity;
    const end = query.end !== undefined ? parseInstant(query.end, 'querystring.end') : new Date();
    const start = query.start !== undefined ? parseInstant(query.start, 'querystring.start') : new Date(end.getTime() - 30 * DAY_MS);
    const boundaries = bucketBoundaries(granularity, start, end, tz);
    const metrics = (query.metrics ? [...new Set(query.metrics.split(','))] : [...USAGE_METRICS]) as UsageMetric[];
    const queries = usageQueries(this.#database, orgId, query, grainFor(boundaries), boundaries);
    const period = [boundaries[0]!.toISOString(), boundaries[boundaries.length - 1]!.toISOString()];
    const rows = await queries.sums();
    const points = boundaries.length - 1;
    const groups = new Map<string | null, { sums: Sums[]; histograms?: Record<Kind, Array<Histogram | undefined>> }>();
    const groupOf = (g: string | null) => {
      let found = groups.get(g);
      if (!found) groups.set(g, (found = { sums: Array.from({ length: points }, zero) }));
      return found;
    };
    for (const row of rows) {
      const cell = groupOf(row.g).sums[row.key - 1]!;
      cell.calls += row.calls;
      cell.duration_seconds += scaled(row.duration_seconds);
      for (const name of ['cost', 'cost_stt', 'cost_llm', 'cost_tts', 'cost_telephony', 'cost_platform'] as const) cell[name] += scaled(row[name]);
      cell.judged += row.judged;
      cell.succeeded += row.succeeded;
    }
    const wanted = new Set(metrics.flatMap((m) => (m in PERCENTILES ? [PERCENTILES[m as keyof typeof PERCENTILES].histogram] : [])));
    const totalHistograms: Partial<Record<Kind, Histogram>> = {};
    for (const kind of wanted) {
      const binRows = await queries.bins(kind);
      const total: Histogram = (totalHistograms[kind] = new Map());
      for (const row of binRows) {
        const group = groupOf(row.g);
        group.histograms ??= { duration: [], latency: [] };
        const cell = (group.histograms[kind][row.key - 1] ??= new Map());
        addCounts(cell, row.lo, row.counts);
        addCounts(total, row.lo, row.counts);
      }
    }
    const totals = zero();
    for (const { sums } of groups.values()) for (const cell of sums) for (const name of SUMMED) totals[name] += cell[name];
    const view = (sums: Sums, histograms: Partial<Record<Kind, Histogram | undefined>>) => {
      const out: Record<string, number> = {};
      for (const metric of metrics) {
        if (metric in PERCENTILES) {
          const { histogram, p } = PERCENTILES[metric as keyof typeof PERCENTILES];
          const counted = histograms[histogram];
          out[metric] = counted ? percentile(counted, p, SCALES[histogram]) : 0;
        } else if (metric === 'success_rate') out[metric] = sums.judged === 0 ? 0 : sums.succeeded / sums.judged;
        else out[metric] = metric === 'calls' ? sums.calls : sums[metric as Summed] / SCALE;
      }
      return out;
    };
    const field = query.group_by === undefined ? undefined : byKey(query.group_by) ? query.group_by : GROUP_FIELDS[query.group_by as keyof typeof GROUP_FIELDS];
    const series = query.group_by === undefined && groups.size === 0 ? [{ group: null, sums: Array.from({ length: points }, zero), histograms: undefined }]
      : [...groups.entries()].sort(([a], [b]) => (a === b ? 0 : a === null ? 1 : b === null ? -1 : a < b ? -1 : 1))
        .map(([g, { sums, histograms }]) => ({ group: field === undefined ? null : { [field]: g }, sums, histograms }));
    return {
      period: { start: period[0]!, end: period[1]! }, granularity, timezone: tz, group_by: query.group_by ?? null,
      series: series.map(({ group, sums, histograms }) => ({
        group,
        points: sums.map((cell, i) => ({ start: boundaries[i]!.toISOString(), ...view(cell, { duration: histograms?.duration[i], latency: histograms?.latency[i] }) }) as Point),
      })),
      totals: view(totals, totalHistograms),
    };
  }
}
