import { Readable } from 'node:stream';
import type { Database } from '../../db/database.ts';
import { copyValues } from '../../db/copy-values.ts';
import { collectYoungGarbage } from '../../core/young-gc.ts';
import type { ExportFormat } from './export-schemas.ts';
import { exportColumns, exportHeader, exportLinesQuery, type ExportRequest } from './export-lines.ts';

export { exportColumns, type ExportRequest } from './export-lines.ts';

/** Lines read per query on the embedded database: one keyset page at a time. */
export const EXPORT_PAGE = 500;
/**
 * Bytes streamed between two young-generation collections (young-gc.ts), which free the buffers the
 * socket read them into: about twice this (the socket's buffer and pg-copy-streams' copy) is dead
 * at most. Over 1M calls: 16 MiB left the RSS growth at 55 MB, 4 MiB at 12-15 MB (~70 scavenges of
 * under a millisecond).
 */
export const EXPORT_GC_BYTES = 4 * 1024 * 1024;

export const EXPORT_CONTENT_TYPES: Record<ExportFormat, string> = { csv: 'text/csv; charset=utf-8', jsonl: 'application/x-ndjson; charset=utf-8' };

/**
 * The export's lines as the database writes them (export-lines.ts), newest first. On PostgreSQL one
 * COPY streams them as bytes: the process holds a socket read at a time and allocates nothing per
 * call (an earlier writer that formatted row objects in JavaScript grew the worker's RSS by ~100 MB
 * over 1M calls: garbage the young generation grew to hold). On the embedded database a COPY would
 * hold its only session for the whole export, so the lines come a keyset page at a time, one string
 * per page.
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

/**
 * The export's file as a byte stream, and how many calls it holds once it has been read. Every
 * EXPORT_GC_BYTES a scavenge frees the buffers the socket read them into (young-gc.ts): memory stays
 * flat by a constant, not by the garbage collector's external-memory limit.
 */
export function exportStream(database: Pick<Database, 'kind' | 'pool'>, request: ExportRequest, format: ExportFormat): { body: Readable; counts: { rows: number } } {
  const counts = { rows: 0 };
  async function* collected() {
    let streamed = 0;
    for await (const chunk of exportLines(database, request, format, counts)) {
      streamed += chunk.length;
      if (streamed >= EXPORT_GC_BYTES) {
        streamed = 0;
        collectYoungGarbage();
      }
      yield chunk;
    }
  }
  return { body: Readable.from(collected(), { objectMode: false }), counts };
}
