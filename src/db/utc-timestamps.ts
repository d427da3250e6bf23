import pg from 'pg';

/**
 * Timestamps of hot reads as ISO 8601 text, formatted where it costs least. `to_char` in the query
 * was 28 % of the calls list's PostgreSQL CPU (issue 33); PostgreSQL's own output of a `timestamp`
 * (`2026-11-22 14:50:16.175`, DateStyle ISO, which the driver's own parsers assume too) plus a few
 * string slices in Node cost less on both sides than either `to_char` or Date objects
 * (measured per 51-row page; the figures are in docs/benchmarks.md, calls list section).
 */

/** `column` (timestamptz) as UTC wall-clock time: a `timestamp` the driver reads with ISO_TIMESTAMPS. */
export const utcTimestamp = (column: string) => `(${column} AT TIME ZONE 'UTC')`;

/** `2026-11-22 14:50:16.1755` → `2026-11-22T14:50:16.175Z`: milliseconds, truncated as `to_char`'s MS and a Date's are. */
export function isoFromUtcText(text: string): string {
  const fraction = text.length > 19 ? `${text.slice(19, 23)}000`.slice(0, 4) : '.000';
  return `${text.slice(0, 10)}T${text.slice(11, 19)}${fraction}Z`;
}

const TIMESTAMP = pg.types.builtins.TIMESTAMP;

/** Per-statement parsers: `timestamp` columns come back as ISO text; every other type as usual. */
export const ISO_TIMESTAMPS: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === TIMESTAMP && format !== 'binary' ? isoFromUtcText : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig['getTypeParser'],
};
