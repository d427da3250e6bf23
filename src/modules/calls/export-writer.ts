import { Readable } from 'node:stream';
import type { Database } from '../../db/database.ts';
import { copyValues } from '../../db/copy-values.ts';
import type { ExportFormat } from './export-schemas.ts';
import { exportColumns, exportHeader, exportLinesQuery, type ExportRequest } from './export-lines.ts';

export { exportColumns, type ExportRequest } from './export-lines.ts';

/** Lines read per query on the embedded database: one keyset page at a time. */
export const EXPORT_PAGE = 500;

export const EXPORT_CONTENT_TYPES: Record<ExportFormat, string> = { csv: 'text/csv; charset=utf-8', jsonl: 'application/x-ndjson; charset=utf-8' };

/**
 * The export's lines as the database writes them (export-lines.ts), newest first. On PostgreSQL one
 * COPY streams them as bytes: the process holds a socket read at a time and allocates nothing per
 * call, so its memory stays flat whatever the number of calls (an earlier writer that formatted
 * row objects in JavaScript grew the worker's RSS by ~100 MB over 1M calls: garbage the young
 * generation grew to hold). On the embedded database a COPY would hold its only session for the
 * whole export, so the lines come a keyset page at a time, one string per page.
 */
export async function* exportLines(database: Pick<Database, 'kind' | 'pool'>, request: ExportRequest, format: ExportFormat, counts: { rows: number }, page = EXPORT_PAGE): AsyncGenerator<Buffer | string> {
  const header = exportHeader(format, exportColumns(request));
  if (header) yield header;
  if (database.kind === 'server') {
    yield* copyValues(database.pool, exportLinesQuery(request, format), counts);
    return;
  }
  let after: { at: string; id: string } | undefined;
  for (;;) {
    const query = exportLinesQuery(request, format, { limit: page, after });
    const { rows } = await database.pool.query<{ line: string; at: Date; call_sid: string }>(query.text, query.values);
    if (rows.length === 0) return;
    counts.rows += rows.length;
    yield rows.map((r) => r.line).join('');
    if (rows.length < page) return;
    const last = rows[rows.length - 1]!;
    after = { at: last.at.toISOString(), id: last.call_sid };
  }
}

/** The export's file as a byte stream, and how many calls it holds once it has been read. */
export function exportStream(database: Pick<Database, 'kind' | 'pool'>, request: ExportRequest, format: ExportFormat): { body: Readable; counts: { rows: number } } {
  const counts = { rows: 0 };
  return { body: Readable.from(exportLines(database, request, format, counts), { objectMode: false }), counts };
}
