import type pg from 'pg';
import { copyBinary, type CopyRow } from '../../../db/copy-rows.ts';
import { SUMMARY_COLUMNS, bestTurn, wantedWords } from '../call-list-queries.ts';
import { filterSql, searchQuery, type CallFilters } from '../call-filter-queries.ts';
import { SNIPPET_LEAD, SNIPPET_MAX } from '../snippet.ts';
import type { ExportFormat } from './schemas.ts';

/**
 * An export's rows as the database formats them: for CSV each call's fields as text values (the
 * writer, writer.ts, has csv-stringify quote and join them), for JSON lines each call's line
 * (PostgreSQL's to_json escapes the strings). The worker reads only text: no row object, no
 * date or number to convert, nothing to serialize but the CSV record.
 *
 * The values are what the list's rows gave when they were formatted in JavaScript (the list's query,
 * then String and JSON.stringify): numbers in JavaScript's notation, JSON without spaces, null as
 * null (an empty CSV field), booleans as true/false, and the list's snippet rule (snippet.ts) for `q`.
 */

// JavaScript's white space (String.prototype.trim, /\s/u): what a snippet is trimmed of and where its words break.
const JS_SPACES = '\t\n\u000b\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff';
const JS_SPACE_CLASS = String.raw`\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff`;
const spacesLiteral = `E'${[...JS_SPACES].map((c) => `\\u${c.codePointAt(0)!.toString(16).padStart(4, '0')}`).join('')}'`;
const jsTrim = (text: string) => `btrim(${text}, ${spacesLiteral})`;

/**
 * A float8 as JavaScript's Number#toString writes it. PostgreSQL writes the same shortest digits
 * but switches to an exponent below 1e-4 and from 1e15 (JavaScript: below 1e-6 and from 1e21), and
 * pads the exponent to two digits: those rare values are rewritten from their digits.
 */
export function jsNumber(expr: string): string {
  const t = `(${expr})::text`;
  const rewritten = `(SELECT CASE
      WHEN x <= -7 THEN s || m || CASE WHEN f = '' THEN '' ELSE '.' || f END || 'e-' || (-x)::text
      WHEN x < 0 THEN s || '0.' || repeat('0', -x - 1) || m || f
      WHEN x >= 21 THEN s || m || CASE WHEN f = '' THEN '' ELSE '.' || f END || 'e+' || x::text
      WHEN length(f) > x THEN s || m || left(f, x) || '.' || substr(f, x + 1)
      ELSE s || m || f || repeat('0', x - length(f)) END
    FROM (SELECT p[1] AS s, p[2] AS m, coalesce(p[3], '') AS f, p[4]::int AS x FROM regexp_match(${t}, '^(-?)(\\d)(?:\\.(\\d+))?e([+-]\\d+)$') AS p) d)`;
  return `CASE WHEN strpos(${t}, 'e') = 0 THEN ${t} ELSE ${rewritten} END`;
}

/** jsonb as JSON.stringify writes it: PostgreSQL's text less the spaces it puts after `:` and `,` (strings kept whole). */
export const compactJson = (expr: string) => `regexp_replace((${expr})::text, '("(?:[^"\\\\]|\\\\.)*")| ', '\\1', 'g')`;

/** A value as a JSON text (strings escaped as JSON.stringify does: PostgreSQL escapes the same characters the same way). */
const jsonField = (expr: string) => `coalesce(to_json(${expr})::text, 'null')`;

/** A jsonb column whose null reads as `fallback`: its JSON text, or for CSV a string's own text (csv-stringify writes strings as they are). */
function jsonColumn(expr: string, fallback: string, format: ExportFormat): string {
  const text = format === 'csv' ? `CASE jsonb_typeof(${expr}) WHEN 'string' THEN ${expr} #>> '{}' ELSE ${compactJson(expr)} END` : compactJson(expr);
  return `CASE WHEN ${expr} IS NULL OR jsonb_typeof(${expr}) = 'null' THEN '${fallback}' ELSE ${text} END`;
}

/** The list item's fields, in the order of the API's CallSummary (its analysis outcome is among ANALYSIS_FIELDS, after metadata): the CSV header. */
export const SUMMARY_FIELDS = [
  'call_sid', 'to_number', 'from_number', 'agent_id', 'agent_name', 'client_id', 'call_type', 'status', 'recording_enabled',
  'total_cost', 'duration_seconds', 'turn_count', 'created_at', 'updated_at', 'start_time', 'end_time', 'end_reason', 'billing_status',
] as const;
/** The analysis's columns (extensions.md §13), after metadata: null for a call without one. */
export const ANALYSIS_FIELDS = [
  'analysis_status', 'analysis_success', 'analysis_success_reason', 'analysis_sentiment', 'analysis_summary', 'analysis_structured_data',
] as const;
type Kind = 'text' | 'boolean' | 'number' | 'integer' | 'json';
const KINDS: Partial<Record<string, Kind>> = {
  recording_enabled: 'boolean', total_cost: 'number', duration_seconds: 'number', turn_count: 'integer', analysis_success: 'boolean', analysis_structured_data: 'json',
};
/** Each analysis column from the call's `analysis` (jsonb), in the middle query. */
const ANALYSIS_VALUES = (format: ExportFormat) => [
  `c.analysis ->> 'status' AS analysis_status`,
  `(c.analysis ->> 'success')::boolean AS analysis_success`,
  `c.analysis ->> 'success_reason' AS analysis_success_reason`,
  `c.analysis ->> 'sentiment' AS analysis_sentiment`,
  `c.analysis ->> 'summary' AS analysis_summary`,
  `CASE WHEN c.analysis -> 'structured_data' IS NULL OR jsonb_typeof(c.analysis -> 'structured_data') = 'null' THEN NULL ELSE ${jsonColumn(`(c.analysis -> 'structured_data')`, '', format)} END AS analysis_structured_data`,
];

export interface ExportRequest {
  orgId: string;
  filters: CallFilters;
  includeTranscript: boolean;
}

/** The columns of an export: the list item's, its snippet with `q`, the call's metadata, and the transcript when asked. */
export function exportColumns(request: Pick<ExportRequest, 'filters' | 'includeTranscript'>): string[] {
  return [...SUMMARY_FIELDS, ...(request.filters.q !== undefined ? ['snippet'] : []), 'metadata', ...ANALYSIS_FIELDS, ...(request.includeTranscript ? ['transcript'] : [])];
}

/**
 * One column's value from the middle query's column of the same name (`v.<name>`): for CSV its text
 * (null stays null), for a JSON line its JSON text.
 */
function fieldText(column: string, format: ExportFormat): string {
  const v = `v.${column}`;
  const kind = KINDS[column] ?? 'text';
  if (column === 'metadata' || column === 'transcript' || column === 'snippet') {
    const text = `v.${column}_text`;
    return format === 'csv' || column !== 'snippet' ? text : jsonField(text);
  }
  if (kind === 'number') return format === 'csv' ? jsNumber(v) : `coalesce(${jsNumber(v)}, 'null')`;
  if (kind === 'json') return format === 'csv' ? v : `coalesce(${v}, 'null')`;
  if (kind === 'boolean' || kind === 'integer') return format === 'csv' ? `${v}::text` : jsonField(v);
  return format === 'csv' ? v : jsonField(v);
}

/**
 * The snippet of snippet.ts from ts_headline's marked text `c.marked`, as lateral steps: the text
 * without marks and where the first match starts (code points, as Array.from counts them), then the
 * window of SNIPPET_MAX characters starting SNIPPET_LEAD before the match, moved forward to a word's start.
 */
export const SNIPPET_STEPS = `CROSS JOIN LATERAL (SELECT replace(replace(c.marked, chr(2), ''), chr(3), '') AS plain,
      CASE strpos(c.marked, chr(2)) WHEN 0 THEN 0 ELSE length(replace(left(c.marked, strpos(c.marked, chr(2)) - 1), chr(3), '')) END AS match_at OFFSET 0) s1
    CROSS JOIN LATERAL (SELECT length(s1.plain) AS n, greatest(0, least(s1.match_at - ${SNIPPET_LEAD}, length(s1.plain) - ${SNIPPET_MAX})) AS start0 OFFSET 0) s2`;
export const SNIPPET_TEXT = `CASE WHEN c.marked IS NULL OR c.marked = '' THEN ''
      WHEN s2.n <= ${SNIPPET_MAX} THEN ${jsTrim('s1.plain')}
      ELSE ${jsTrim(`substr(s1.plain, 1 + CASE WHEN s2.start0 > 0 AND s2.start0 < s1.match_at
        THEN s2.start0 + length(substring(substr(s1.plain, s2.start0, s1.match_at - s2.start0) from '^[^${JS_SPACE_CLASS}]*'))
        ELSE s2.start0 END, ${SNIPPET_MAX})`)} END`;

interface RowsQuery {
  text: string;
  values: unknown[];
}

/**
 * The export's rows, newest first (the list's order and filters, filterSql): for CSV one text column
 * per export column (exportColumns), for JSON lines one `line` column; then, when `page` is given,
 * `at` (created_at as text, to the microsecond) and `call_sid` for the next page's keyset (`$n`
 * parameters for the limit and, with `after`, the last row's `at` and call_sid).
 */
function exportRowsQuery(request: ExportRequest, format: ExportFormat, page?: { limit: number; after?: { at: string; id: string } }): RowsQuery {
  const { where, values } = filterSql(request.orgId, request.filters);
  const conditions = [where];
  if (page?.after) {
    values.push(page.after.at, page.after.id);
    conditions.push(`(created_at, call_sid) < ($${values.length - 1}::timestamptz, $${values.length})`);
  }
  const q = request.filters.q;
  let inner = `${SUMMARY_COLUMNS}, calls.created_at AS at, metadata, analysis${request.includeTranscript ? ', transcript' : ''}`;
  if (q !== undefined) {
    values.push(q, wantedWords(q));
    inner += `, ${bestTurn(searchQuery(`$${values.length - 1}`), searchQuery(`$${values.length}`))} AS marked`;
  }
  let limit = ' OFFSET 0';
  if (page) {
    values.push(page.limit);
    limit = ` LIMIT $${values.length}`;
  }
  const columns = exportColumns(request);
  const middle = [
    'c.*', `${jsonColumn('c.metadata', '{}', format)} AS metadata_text`, ...ANALYSIS_VALUES(format),
    ...(request.includeTranscript ? [`${jsonColumn('c.transcript', '[]', format)} AS transcript_text`] : []),
    ...(q !== undefined ? [`${SNIPPET_TEXT} AS snippet_text`] : []),
  ];
  const fields = format === 'csv'
    ? columns.map((c) => `(${fieldText(c, 'csv')})::text`).join(', ') // text whatever the column's type: a binary COPY sends text as its bytes
    : `'{' || ${columns.map((c) => `'${JSON.stringify(c)}:' || ${fieldText(c, 'jsonl')}`).join(` || ',' || `)} || E'}\\n' AS line`;
  // Each step is a subquery of its own (OFFSET 0 or LIMIT keep the planner from merging it into the
  // next, which would compute the snippet's turn and the JSON texts once per mention), and each
  // repeats the order: the planner then knows the rows come sorted and sorts only once, at the bottom.
  const text = `SELECT ${fields}${page ? ', v.at::text, v.call_sid' : ''}
    FROM (SELECT ${middle.join(', ')}
      FROM (SELECT ${inner} FROM calls WHERE ${conditions.join(' AND ')} ORDER BY calls.created_at DESC, calls.call_sid DESC${limit}) c
      ${q !== undefined ? SNIPPET_STEPS : ''} ORDER BY c.at DESC, c.call_sid DESC OFFSET 0) v
    ORDER BY v.at DESC, v.call_sid DESC`;
  return { text, values };
}

/** The export's rows in one `COPY … TO STDOUT (FORMAT binary)` (one query, one snapshot), as the socket delivers them (PostgreSQL). */
export function copyExportRows(pool: pg.Pool, request: ExportRequest, format: ExportFormat): AsyncGenerator<Buffer> {
  return copyBinary(pool, exportRowsQuery(request, format));
}

/** One keyset page of the export's rows as arrays of text, each followed by its `at` and call_sid (the embedded database). */
export async function exportRowsPage(pool: pg.Pool, request: ExportRequest, format: ExportFormat, page: { limit: number; after?: { at: string; id: string } }): Promise<CopyRow[]> {
  const query = exportRowsQuery(request, format, page);
  const { rows } = await pool.query<CopyRow>({ text: query.text, values: query.values, rowMode: 'array' });
  return rows;
}
