import { Readable } from 'node:stream';
import { stringify } from 'csv-stringify/sync';
import type { Database } from '../../../db/database.ts';
import { BinaryCopyRows, type CopyRow } from '../../../db/copy-rows.ts';
import type { ExportFormat } from './schemas.ts';
import { copyExportRows, exportColumns, exportRowsPage, type ExportRequest } from './export-queries.ts';

export type { ExportRequest } from './export-queries.ts';

/** Rows read per query on the embedded database: one keyset page at a time. */
export const EXPORT_PAGE = 500;
/** Bytes of the file handed on at a time: each piece is one buffer, written in place. */
export const EXPORT_PIECE = 64 * 1024;

export const EXPORT_CONTENT_TYPES: Record<ExportFormat, string> = { csv: 'text/csv; charset=utf-8', jsonl: 'application/x-ndjson; charset=utf-8' };

/**
 * The file's bytes gathered in buffers of EXPORT_PIECE: each record's text is written into the
 * current buffer as soon as it is made, so no text waits in the heap (where strings alive at a
 * young-generation collection would make V8 grow it: see exportLines).
 */
class Pieces {
  readonly full: Buffer[] = [];
  #buffer = Buffer.allocUnsafeSlow(EXPORT_PIECE);
  #used = 0;

  add(text: string) {
    const bytes = Buffer.byteLength(text);
    if (this.#used + bytes > this.#buffer.length) {
      if (this.#used > 0) this.#flush();
      if (bytes > this.#buffer.length) this.#buffer = Buffer.allocUnsafeSlow(bytes);
    }
    this.#used += this.#buffer.write(text, this.#used);
  }

  /** The buffers filled so far, and the one being filled when `last`. */
  take(last = false): Buffer[] {
    if (last && this.#used > 0) this.#flush();
    return this.full.splice(0);
  }

  #flush() {
    this.full.push(this.#buffer.subarray(0, this.#used));
    this.#buffer = Buffer.allocUnsafeSlow(EXPORT_PIECE);
    this.#used = 0;
  }
}

/**
 * The export's file in pieces, newest call first: the database formats each call's values as text
 * (export-queries.ts); csv-stringify writes each CSV record from them (RFC 4180: a header row, CRLF, a
 * field quoted when it holds a comma, a quote, a CR or a LF, quotes doubled, null empty); a JSON
 * line comes whole from the database (to_json). `counts.rows` counts the calls.
 *
 * On PostgreSQL the rows come from one `COPY … TO STDOUT (FORMAT binary)` (one query, one
 * snapshot), decoded as the socket delivers them (copy-rows.ts), each record written into the file's
 * buffer before the next row is decoded. What keeps memory flat is how little is alive whenever V8
 * collects its young generation: csv-stringify leaves ~15-20 KB of garbage per record (a collection
 * every ~2,000 records), and V8 grows the young generation once the bytes surviving its collections
 * add up to its size. A few KB survive each here; rows read 500 at a time from a cursor survived as
 * a batch and grew it to its maximum (+170-200 MB RSS over 1M calls), as row objects had (+101 MB).
 * Forced collections do not help: their survivors add up too (+81 MB with one every 250 rows).
 * On the embedded database, where a COPY would hold its only session for
 * the whole export, the rows come a keyset page at a time, nothing held open between pages.
 */
export async function* exportLines(database: Pick<Database, 'kind' | 'pool'>, request: ExportRequest, format: ExportFormat, counts: { rows: number }, page = EXPORT_PAGE): AsyncGenerator<Buffer> {
  const columns = exportColumns(request);
  // csv-stringify quotes a lone CR or LF only when told (given CRLF records it quotes just CRLF), and readers end a record there.
  const options = { record_delimiter: 'windows', quote_record_delimiter: true } as const;
  const pieces = new Pieces();
  const add = format === 'csv' ? (row: CopyRow) => pieces.add(stringify([row], options)) : (row: CopyRow) => pieces.add(row[0]!);
  if (format === 'csv') pieces.add(stringify([], { ...options, columns, header: true }));
  if (database.kind === 'server') {
    const rows = new BinaryCopyRows(format === 'csv' ? columns.length : 1);
    for await (const chunk of copyExportRows(database.pool, request, format)) {
      rows.write(chunk, add);
      counts.rows = rows.rows;
      yield* pieces.take();
    }
    rows.end();
  } else {
    let after: { at: string; id: string } | undefined;
    for (;;) {
      const rows = await exportRowsPage(database.pool, request, format, { limit: page, after });
      for (const row of rows) add(row.slice(0, -2)); // without the keyset's `at` and call_sid
      counts.rows += rows.length;
      yield* pieces.take(true);
      if (rows.length < page) break;
      const last = rows[rows.length - 1]!;
      after = { at: last[last.length - 2]!, id: last[last.length - 1]! };
    }
  }
  yield* pieces.take(true);
}

/** The export's file as a byte stream, and how many calls it holds once it has been read. */
export function exportStream(database: Pick<Database, 'kind' | 'pool'>, request: ExportRequest, format: ExportFormat): { body: Readable; counts: { rows: number } } {
  const counts = { rows: 0 };
  return { body: Readable.from(exportLines(database, request, format, counts), { objectMode: false }), counts };
}
