import type { Static } from 'typebox';
import { Errors } from '../../core/errors.ts';
import { isStorableInstant, parseInstant } from '../../core/time-zones.ts';
import { TRANSCRIPT_SEARCH_CONFIG } from '../../db/schema/index.ts';
import { METADATA_FILTERS_MAX, type CallFilterFields } from './schemas.ts';

/** The calls list's filters (extensions.md §4); the exports take the same ones. */
export interface CallFilters {
  agentId?: string;
  status?: string;
  callType?: string;
  /** Created at or after. */
  from?: Date;
  /** Created before. */
  to?: Date;
  endReason?: string;
  billingStatus?: string;
  /** The call's to or from number. */
  phoneNumber?: string;
  minDuration?: number;
  maxDuration?: number;
  minCost?: number;
  maxCost?: number;
  hasRecording?: boolean;
  campaignId?: string;
  /** The version of its agent the call ran. */
  agentVersion?: number;
  /** Top-level keys of `metadata` and the text their value must be. */
  metadata?: Array<[key: string, value: string]>;
  /** Web-search syntax over the transcript: words, "quoted phrases", -excluded words. */
  q?: string;
  /** The analysis's judgement and caller sentiment (extensions.md §13). */
  analysisSuccess?: boolean;
  analysisSentiment?: string;
  /** Top-level keys of the analysis's `structured_data` and the text their value must be. */
  analysisData?: Array<[key: string, value: string]>;
}

/** The filter fields of a list query or an export request, and their `metadata.<key>` fields. */
export type CallFilterInput = { [K in keyof typeof CallFilterFields]?: Static<(typeof CallFilterFields)[K]> } & Record<string, unknown>;

const METADATA_PREFIX = 'metadata.';
const ANALYSIS_DATA_PREFIX = 'analysis.data.';

/** The `<prefix><key>=<value>` fields of a request, sorted by key (a statement's shape does not depend on their order). */
function keyedFilters(input: CallFilterInput, prefix: string, area: string, what: string): Array<[string, string]> | undefined {
  const pairs: Array<[string, string]> = [];
  for (const [field, value] of Object.entries(input)) {
    if (field.startsWith(prefix) && typeof value === 'string') pairs.push([field.slice(prefix.length), value]);
  }
  if (pairs.length > METADATA_FILTERS_MAX) {
    throw Errors.validation(`Too many ${what} filters`, [{ path: area, message: `at most ${METADATA_FILTERS_MAX} ${prefix}<key> filters` }]);
  }
  return pairs.length > 0 ? pairs.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)) : undefined;
}

/** `YYYY-MM-DD` is a UTC day: `from` starts at its beginning, `to` ends at its end. */
function boundary(value: string | undefined, edge: 'from' | 'to', area: string): Date | undefined {
  if (value === undefined) return undefined;
  const isDay = value.length === 10;
  const path = `${area}.${edge}`;
  const at = parseInstant(isDay ? `${value}T00:00:00.000Z` : value, path);
  if (!(isDay && edge === 'to')) return at;
  const end = new Date(at.getTime() + 86_400_000);
  if (!isStorableInstant(end)) throw Errors.validation(`Invalid ${path}`, [{ path, message: 'is out of range (years 0001 to 9999)' }]);
  return end;
}

/** The request's filter fields (already checked by their schema) as filters; `area` names them in errors. */
export function callFiltersOf(input: CallFilterInput, area: 'querystring' | 'body'): CallFilters {
  return {
    agentId: input.agent_id, status: input.status, callType: input.call_type,
    from: boundary(input.from, 'from', area), to: boundary(input.to, 'to', area),
    endReason: input.end_reason, billingStatus: input.billing_status, phoneNumber: input.phone_number,
    minDuration: input.min_duration, maxDuration: input.max_duration, minCost: input.min_cost, maxCost: input.max_cost,
    hasRecording: input.has_recording, campaignId: input.campaign_id, agentVersion: input.agent_version, q: input.q,
    metadata: keyedFilters(input, METADATA_PREFIX, area, 'metadata'),
    analysisSuccess: input['analysis.success'], analysisSentiment: input['analysis.sentiment'],
    analysisData: keyedFilters(input, ANALYSIS_DATA_PREFIX, area, 'analysis.data'),
  };
}

/** The parsed `q`, for the snippet: the same query the condition matches. */
export const searchQuery = (parameter: string) => `websearch_to_tsquery('${TRANSCRIPT_SEARCH_CONFIG}', ${parameter})`;

type Condition = (parameter: () => string) => string;

// Each filter's SQL, given a function that adds its value as the next parameter. Bounds on duration
// and cost leave out calls that have none yet (SQL comparisons with NULL are never true).
const CONDITIONS: Array<[keyof CallFilters, Condition]> = [
  ['agentId', (p) => `agent_id = ${p()}`],
  ['status', (p) => `status = ${p()}`],
  ['callType', (p) => `call_type = ${p()}`],
  ['from', (p) => `created_at >= ${p()}::timestamptz`],
  ['to', (p) => `created_at < ${p()}::timestamptz`],
  ['endReason', (p) => `end_reason = ${p()}`],
  ['billingStatus', (p) => `billing_status = ${p()}`],
  ['phoneNumber', (p) => { const n = p(); return `(to_number = ${n} OR from_number = ${n})`; }],
  ['minDuration', (p) => `duration_seconds >= ${p()}::float8`],
  ['maxDuration', (p) => `duration_seconds <= ${p()}::float8`],
  ['minCost', (p) => `total_cost >= ${p()}::numeric`],
  ['maxCost', (p) => `total_cost <= ${p()}::numeric`],
  ['campaignId', (p) => `campaign_id = ${p()}`],
  ['agentVersion', (p) => `agent_version = ${p()}::int`],
  ['q', (p) => `transcript_search @@ ${searchQuery(p())}`],
  // JSON's own text of the judgement: a failed analysis (success null) matches neither value.
  ['analysisSuccess', (p) => `analysis ->> 'success' = (${p()}::boolean)::text`],
  ['analysisSentiment', (p) => `analysis ->> 'sentiment' = ${p()}`],
];

export interface FilterSql {
  /** `WHERE` conditions joined by AND, the organization's first. */
  where: string;
  values: unknown[];
}

/**
 * The filters as SQL conditions with numbered parameters ($1 is the organization): the one
 * translation the list and the exports share, so an export's rows are the list's rows.
 */
export function filterSql(orgId: string, filters: CallFilters): FilterSql {
  const values: unknown[] = [orgId];
  const parameter = (value: unknown) => () => {
    values.push(value instanceof Date ? value.toISOString() : value);
    return `$${values.length}`;
  };
  const conditions = ['client_id = $1'];
  for (const [key, condition] of CONDITIONS) {
    const value = filters[key];
    if (value === undefined) continue;
    conditions.push(condition(parameter(value)));
  }
  if (filters.hasRecording !== undefined) {
    conditions.push(filters.hasRecording ? 'recording_key IS NOT NULL' : 'recording_key IS NULL');
  }
  for (const [key, value] of filters.metadata ?? []) {
    conditions.push(`metadata ->> ${parameter(key)()} = ${parameter(value)()}`);
  }
  for (const [key, value] of filters.analysisData ?? []) {
    conditions.push(`analysis -> 'structured_data' ->> ${parameter(key)()} = ${parameter(value)()}`);
  }
  return { where: conditions.join(' AND '), values };
}
