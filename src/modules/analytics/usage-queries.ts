import type { Static } from 'typebox';
import type pg from 'pg';
import type { Database } from '../../db/database.ts';
import { FINAL_STATUSES } from '../../core/call-enums.ts';
import { DURATION_SCALE, FACTOR, LATENCY_SCALE, type BinScale } from './usage-histogram.ts';
import type { UsageQuery } from './usage-schemas.ts';

type Filters = Pick<Static<typeof UsageQuery>, 'agent_id' | 'call_type' | 'status' | 'group_by'>;

/** One group's sums in one bucket (`key`, from 1): costs as numeric text, summed exactly by the caller. */
export interface UsageRow {
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

/** One row's histogram in one group and bucket: `counts[i]` values in bin `lo + i`. */
export interface BinRow {
  g: string | null;
  key: number;
  lo: number;
  counts: Array<number | null>;
}

const DATA = 'analysis.data.';
/** The groupings by a key of the caller's (metadata, the analysis's structured_data): read from the calls, not the rollups. */
export const byKey = (groupBy: string | undefined) => groupBy !== undefined && (groupBy.startsWith('metadata.') || groupBy.startsWith(DATA));

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

/** The bin of usage-histogram.ts's `binOf` in SQL, for the value of `expression`. */
function binSql(expression: string, scale: BinScale): string {
  return `CASE WHEN coalesce(${expression}, 0) <= 0 THEN 0 WHEN ${expression} < ${scale.base} THEN 1
    ELSE least(${scale.maxBin}, 2 + floor(ln(${expression} / ${scale.base}) / ln(${FACTOR}))::int) END`;
}

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

function sourceOf(query: Filters, grain: string): Source {
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
    // latency_histogram is 1-based from bin 0 (rollup-queries.ts).
    latency: { from: 'call_usage_rollups', bins: '0 AS lo, latency_histogram AS counts', where: ' AND cardinality(latency_histogram) > 0' },
  };
}

/**
 * The reads of one usage report (usage.ts) for the organization, the filters and the buckets that
 * `boundaries` delimit (bucket i + 1 from boundaries[i]): the rollups at `grain`, or the ended calls
 * for a grouping by key. The rollups' reads are named prepared statements, one per shape of query
 * (which grouping, which filters), so every report of a shape shares its parse and plan; the calls'
 * are planned for their values (Database.planned): how many of an organization's calls a period
 * holds decides their plan.
 */
export function usageQueries(database: Pick<Database, 'prepared' | 'planned'>, orgId: string, query: Filters, grain: string, boundaries: Date[]) {
  const source = sourceOf(query, grain);
  const period = [boundaries[0]!.toISOString(), boundaries[boundaries.length - 1]!.toISOString(), `{${boundaries.map((b) => b.toISOString()).join(',')}}`];
  const values = [orgId, ...period, ...source.values];
  const where = ['client_id = $1', `${source.at} >= $2::timestamptz`, `${source.at} < $3::timestamptz`, ...source.where].join(' AND ');
  const bucket = `width_bucket(${source.at}, $4::timestamptz[])`;
  const shape = `${source.from}_${byKey(query.group_by) ? 'meta' : (query.group_by ?? 'none').replace('.', '_')}_${source.where.length}_${[query.agent_id, query.call_type, query.status].map((f) => (f === undefined ? 0 : 1)).join('')}`;
  const read = <R extends pg.QueryResultRow>(name: string, text: string) =>
    source.from === 'calls' ? database.planned<R>(text, values) : database.prepared<R>(name, text, values);
  return {
    /** The sums per group and bucket. */
    sums: () => read<UsageRow>(`usage_${shape}`,
      `SELECT ${source.group} AS g, ${bucket} AS key, ${source.sums} FROM ${source.from} WHERE ${where} GROUP BY 1, 2`),
    /** The durations' or the agent turns' latencies' histograms, a row each (not summed: the caller adds them up). */
    bins: (kind: 'duration' | 'latency') => {
      const { from, bins, extra } = kind === 'duration' ? { from: source.from, bins: source.bins, extra: '' } : { from: source.latency.from, bins: source.latency.bins, extra: source.latency.where };
      return read<BinRow>(`usage_${kind}_bins_${shape}`, `SELECT ${source.group} AS g, ${bucket} AS key, ${bins} FROM ${from} WHERE ${where}${extra}`);
    },
  };
}
