import type { Static } from 'typebox';
import type { Database } from '../../db/database.ts';
import { Errors } from '../../core/errors.ts';
import { isTimeZone, parseInstant } from '../../core/time-zones.ts';
import { FINAL_STATUSES } from '../../core/call-enums.ts';
import { addCounts, binSql, DURATION_SCALE, LATENCY_SCALE, percentile, type Histogram } from './usage-histogram.ts';
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

interface Row {
  g: string | null;
  key: number;
  calls: number;
  duration_seconds: number;
  cost: string;
  cost_stt: string;
  cost_llm: string;
  cost_tts: string;
  cost_telephony: string;
  cost_platform: string;
  /** Calls whose analysis judged success, and those that succeeded (success_rate). */
  judged: number;
  succeeded: number;
}

const scaled = (value: string | number | null) => Math.round(Number(value ?? 0) * SCALE);
const zero = (): Sums => ({ calls: 0, duration_seconds: 0, cost: 0, cost_stt: 0, cost_llm: 0, cost_tts: 0, cost_telephony: 0, cost_platform: 0, judged: 0, succeeded: 0 });
const DATA = 'analysis.data.';
/** The groupings by a key of the caller's (metadata, the analysis's structured_data): read from the calls, not the rollups. */
const byKey = (groupBy: string | undefined) => groupBy !== undefined && (groupBy.startsWith('metadata.') || groupBy.startsWith(DATA));
const invalid = (field: string, message: string) => Errors.validation(`Invalid ${field}`, [{ path: `querystring.${field}`, message }]);

/** The SQL of one source: the rollups (every group_by but metadata.<key> and analysis.data.<key>), or the calls themselves. */
interface Source {
  from: string;
  /** Its conditions after the organization ($1), the period ($2, $3) and the boundaries ($4). */
  where: string[];
  values: unknown[];
  group: string;
  at: string;
  sums: string;
  /** The duration bin of a row, and its count: a rollup row holds a histogram, a call one duration. */
  bins: string;
  /** The rows of agent-turn latencies (`from`), their bins (`bins`: lo and counts, as above) and what they need besides (`where`). */
  latency: { from: string; bins: string; where: string };
}

/** The percentile metrics: which histogram, which rank, which bins. */
const PERCENTILES = {
  duration_p50: { histogram: 'duration', p: 0.5 }, duration_p95: { histogram: 'duration', p: 0.95 },
  latency_p50: { histogram: 'latency', p: 0.5 }, latency_p95: { histogram: 'latency', p: 0.95 },
} as const;
type Kind = 'duration' | 'latency';
const SCALES = { duration: DURATION_SCALE, latency: LATENCY_SCALE } as const;

const ROLLUP_SUMS = `sum(calls)::int AS calls, sum(duration_seconds)::float8 AS duration_seconds, sum(cost)::text AS cost, sum(cost_stt)::text AS cost_stt,
  sum(cost_llm)::text AS cost_llm, sum(cost_tts)::text AS cost_tts, sum(cost_telephony)::text AS cost_telephony, sum(cost_platform)::text AS cost_platform,
  sum(analysis_judged)::int AS judged, sum(analysis_succeeded)::int AS succeeded`;
const part = (name: string) => `sum(coalesce((cost_breakdown ->> '${name}')::numeric, 0))::text AS cost_${name}`;
const CALL_SUMS = `count(*)::int AS calls, sum(coalesce(duration_seconds, 0))::float8 AS duration_seconds, sum(coalesce(total_cost, 0))::text AS cost,
  ${['stt', 'llm', 'tts', 'telephony', 'platform'].map(part).join(', ')},
  (count(*) FILTER (WHERE analysis ->> 'success' IS NOT NULL))::int AS judged, (count(*) FILTER (WHERE analysis ->> 'success' = 'true'))::int AS succeeded`;
// The bins of usage-histogram.ts in SQL (only the metadata.<key> grouping reads calls).
const CALL_BIN = binSql('duration_seconds', DURATION_SCALE);
// A call's agent turns with a latency, one row each.
const CALL_TURNS = `calls CROSS JOIN LATERAL (SELECT (turn -> 'latency' ->> 'total_ms')::float8 AS total_ms
  FROM jsonb_array_elements(coalesce(transcript, '[]'::jsonb)) turn
  WHERE turn ->> 'role' = 'agent' AND jsonb_typeof(turn -> 'latency' -> 'total_ms') = 'number') turns`;

/**
 * GET /api/analytics/usage: sums per bucket of the zone and per group, every bucket present. Groups
 * backed by rollups read call_usage_rollups at the coarsest grain the buckets allow (UTC days, hours,
 * quarters or minutes), so the cost depends on the period and the groups, not on the number of calls;
 * metadata.<key> reads the ended calls of the period. Totals are the sums of the groups, exactly.
 */
export class UsageAnalytics {
  readonly #database: Pick<Database, 'prepared'>;
  constructor(database: Pick<Database, 'prepared'>) {
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
    const source = this.#source(query, grainFor(boundaries));
    const period = [boundaries[0]!.toISOString(), boundaries[boundaries.length - 1]!.toISOString(), `{${boundaries.map((b) => b.toISOString()).join(',')}}`];
    const values = [orgId, ...period, ...source.values];
    const where = ['client_id = $1', `${source.at} >= $2::timestamptz`, `${source.at} < $3::timestamptz`, ...source.where].join(' AND ');
    const bucket = `width_bucket(${source.at}, $4::timestamptz[])`;
    const shape = `${source.from}_${byKey(query.group_by) ? 'meta' : (query.group_by ?? 'none').replace('.', '_')}_${source.where.length}_${[query.agent_id, query.call_type, query.status].map((f) => (f === undefined ? 0 : 1)).join('')}`;
    const rows = await this.#database.prepared<Row>(`usage_${shape}`,
      `SELECT ${source.group} AS g, ${bucket} AS key, ${source.sums} FROM ${source.from} WHERE ${where} GROUP BY 1, 2`, values);
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
      const { from, bins, extra } = kind === 'duration' ? { from: source.from, bins: source.bins, extra: '' } : { from: source.latency.from, bins: source.latency.bins, extra: source.latency.where };
      const binRows = await this.#database.prepared<{ g: string | null; key: number; lo: number; counts: Array<number | null> }>(`usage_${kind}_bins_${shape}`,
        `SELECT ${source.group} AS g, ${bucket} AS key, ${bins} FROM ${from} WHERE ${where}${extra}`, values);
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

  #source(query: Query, grain: string): Source {
    const values: unknown[] = [];
    const next = (value: unknown) => {
      values.push(value);
      return `$${4 + values.length}`;
    };
    const filters: string[] = [];
    if (query.agent_id !== undefined) filters.push(`agent_id = ${next(query.agent_id)}`);
    if (query.call_type !== undefined) filters.push(`call_type = ${next(query.call_type)}`);
    if (query.status !== undefined) filters.push(`status = ${next(query.status)}`);
    const groupBy = query.group_by;
    if (byKey(groupBy)) {
      const data = groupBy!.startsWith(DATA);
      const key = next(groupBy!.slice(data ? DATA.length : 'metadata.'.length));
      const final = FINAL_STATUSES.map((s) => `'${s}'`).join(', ');
      return {
        from: 'calls', where: [`status IN (${final})`, ...filters], values, group: data ? `analysis -> 'structured_data' ->> ${key}` : `metadata ->> ${key}`, at: 'coalesce(start_time, created_at)', sums: CALL_SUMS,
        bins: `${CALL_BIN} AS lo, ARRAY[1] AS counts`,
        latency: { from: CALL_TURNS, bins: `${binSql('total_ms', LATENCY_SCALE)} AS lo, ARRAY[1] AS counts`, where: '' },
      };
    }
    const dimension = groupBy === 'phone_number' || groupBy === 'end_reason' || groupBy === 'campaign' || groupBy === 'agent_version' ? groupBy
      : groupBy === 'analysis.success' || groupBy === 'analysis.sentiment' ? groupBy.replace('.', '_') : 'none';
    const column = { agent: 'agent_id', status: 'status', call_type: 'call_type' }[groupBy ?? ''] ?? (dimension === 'none' ? 'NULL::text' : "nullif(value, '')");
    return {
      from: 'call_usage_rollups', where: [`grain = ${next(grain)}`, `dimension = ${next(dimension)}`, ...filters], values, group: column, at: 'bucket', sums: ROLLUP_SUMS,
      bins: 'array_lower(histogram, 1) AS lo, histogram[array_lower(histogram, 1):array_upper(histogram, 1)] AS counts',
      // latency_histogram is 1-based from bin 0 (usage-rollups.ts).
      latency: { from: 'call_usage_rollups', bins: '0 AS lo, latency_histogram AS counts', where: ' AND cardinality(latency_histogram) > 0' },
    };
  }
}
