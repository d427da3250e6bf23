import type { Database } from '../../db/database.ts';
import type { Static } from 'typebox';
import { TRANSCRIPT_SEARCH_CONFIG } from '../../db/schema/index.ts';
import { ISO_TIMESTAMPS, utcTimestamp } from '../../db/utc-timestamps.ts';
import type { CallSummary } from './schemas.ts';

type CallSummaryView = Static<typeof CallSummary>;
import { filterSql, searchQuery, type CallFilters } from './call-filter-queries.ts';
import { snippetOf } from './snippet.ts';


/** ISO 8601 text made in SQL, for the export, whose lines PostgreSQL writes whole. */
const isoText = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** The summary columns under their API names, timestamps formatted by `timestamp`. */
const summaryColumns = (timestamp: (column: string) => string) => `call_sid, to_number, from_number, agent_id, agent_name, client_id, call_type, status, recording_enabled,
  total_cost::float8 AS total_cost, duration_seconds, turn_count, ${timestamp('created_at')} AS created_at, ${timestamp('updated_at')} AS updated_at,
  ${timestamp('start_time')} AS start_time, ${timestamp('end_time')} AS end_time, end_reason, billing_status`;

/** The summary columns with the timestamps already ISO 8601 text (the export's). */
export const SUMMARY_COLUMNS = summaryColumns(isoText);

/** The list's: timestamps as UTC `timestamp`s, made ISO text by the driver (ISO_TIMESTAMPS). Rows go out as they come. */
const LIST_COLUMNS = summaryColumns(utcTimestamp);

/** The outcome of the post-call analysis (extensions.md §13) as the list item's scalar fields. */
const ANALYSIS_OUTCOME_COLUMNS = `analysis ->> 'status' AS analysis_status, (analysis ->> 'success')::boolean AS analysis_success, analysis ->> 'sentiment' AS analysis_sentiment`;

/** Marks ts_headline puts around the matched words; control characters a transcript's text hardly has. */
export const MATCH_START = '\u0002';
export const MATCH_END = '\u0003';

/**
 * The best matching turn of the call, with its matched words marked: a turn that matches the whole
 * query if any, then the one with the most of the query's wanted words (`positive`, any of them),
 * the earliest of equals. A scalar subquery in the select list: PostgreSQL computes it for the
 * page's rows only, after the LIMIT.
 */
export const bestTurn = (query: string, positive: string) => `(SELECT ts_headline('${TRANSCRIPT_SEARCH_CONFIG}', turn ->> 'text', ${positive}, 'StartSel=${MATCH_START}, StopSel=${MATCH_END}, HighlightAll=true')
    FROM jsonb_array_elements(CASE WHEN jsonb_typeof(calls.transcript) = 'array' THEN calls.transcript ELSE '[]'::jsonb END) WITH ORDINALITY AS turns(turn, position),
      to_tsvector('${TRANSCRIPT_SEARCH_CONFIG}', coalesce(turn ->> 'text', '')) AS lexemes
    ORDER BY lexemes @@ ${query} DESC, ts_rank(lexemes, ${positive}) DESC, position LIMIT 1)`;

/**
 * The words `q` asks for, any of them (web-search syntax less exclusions, quotes and "or"): what
 * ranks a call's turns for its snippet. Only the snippet uses it; which calls match is the
 * database's reading of `q`.
 */
export function wantedWords(q: string): string {
  const withoutExclusions = q.replace(/(^|\s)-("[^"]*("|$)|\S+)/gu, ' ');
  return withoutExclusions.replace(/"/gu, ' ').split(/\s+/u).filter((w) => w !== '' && w.toLowerCase() !== 'or').join(' or ');
}

/**
 * The calls list, the hottest read of the API: plain SQL planned for its values on every request
 * (Database.planned: a generic plan cannot see the organization's size), rows selected in their response shape.
 * Newest first by (created_at, call_sid), the keyset served by the (client_id, created_at, call_sid) index.
 * With `q`, each row adds the `snippet` of its best matching turn.
 */
export async function listCallSummaries(
  database: Pick<Database, 'planned'>,
  orgId: string,
  filters: CallFilters,
  limit: number,
  before?: { at: Date; id: string },
): Promise<CallSummaryView[]> {
  const { where, values } = filterSql(orgId, filters);
  const conditions = [where];
  if (before) {
    values.push(before.at.toISOString(), before.id);
    conditions.push(`(created_at, call_sid) < ($${values.length - 1}::timestamptz, $${values.length})`);
  }
  // The analysis's outcome is the list's, not the export's (which has its own analysis columns after metadata).
  let columns = `${LIST_COLUMNS}, ${ANALYSIS_OUTCOME_COLUMNS}`;
  if (filters.q !== undefined) {
    // The snippet parses q again from a parameter of its own: the filter's number depends on the other filters.
    values.push(filters.q, wantedWords(filters.q));
    columns += `, ${bestTurn(searchQuery(`$${values.length - 1}`), searchQuery(`$${values.length}`))} AS snippet`;
  }
  values.push(limit);
  // ORDER BY names the table: the select list reuses the column names for the ISO text.
  const text = `SELECT ${columns} FROM calls WHERE ${conditions.join(' AND ')} ORDER BY calls.created_at DESC, calls.call_sid DESC LIMIT $${values.length}`;
  const rows = await database.planned<CallSummaryView>(text, values, ISO_TIMESTAMPS);
  if (filters.q !== undefined) for (const row of rows) row.snippet = snippetOf(row.snippet ?? null);
  return rows;
}
