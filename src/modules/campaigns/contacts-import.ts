import { on } from 'node:events';
import { pipeline, type Readable } from 'node:stream';
import { CsvError, parse } from 'csv-parse';
import { Errors } from '../../core/errors.ts';
import { unstorableText } from '../../core/http/input-guards.ts';
import { MAX_VARIABLE_LENGTH, MAX_VARIABLES, type RejectionReason } from './schemas.ts';

/** One row of an upload: a contact to add, or the reason it is refused. */
export type ContactInput =
  | { row: number; phoneNumber: string; variables: Record<string, string> }
  | { row: number; reason: RejectionReason };

const E164 = /^\+[1-9]\d{1,14}$/;

/** The row's contact, or why it is refused: the same rules for CSV and JSON rows. */
export function checkContact(row: number, phoneNumber: string, variables: Record<string, string>): ContactInput {
  const number = phoneNumber.trim();
  if (!E164.test(number)) return { row, reason: 'invalid_phone_number' };
  const entries = Object.entries(variables);
  if (entries.length > MAX_VARIABLES) return { row, reason: 'invalid_variables' };
  for (const [name, value] of entries) {
    if (value.length > MAX_VARIABLE_LENGTH || unstorableText(value) || unstorableText(name)) return { row, reason: 'invalid_variables' };
  }
  return { row, phoneNumber: number, variables };
}

function checkHeader(header: string[]): string[] {
  const names = header.map((h) => h.trim());
  const problem = (message: string) => Errors.validation('Invalid CSV header', [{ path: 'body.file', message }]);
  if (!names.includes('phone_number')) throw problem('the header row has no phone_number column');
  if (names.length - 1 > MAX_VARIABLES) throw problem(`at most ${MAX_VARIABLES} columns besides phone_number (call variables)`);
  if (new Set(names).size !== names.length) throw problem('column names must be unique');
  if (names.some((n) => !n || n.length > 64 || unstorableText(n))) throw problem('column names must be 1-64 characters of valid text');
  return names;
}

/**
 * The contacts of a CSV stream, parsed as it arrives (csv-parse, never the whole file in memory), in
 * chunks: the records the parser holds each time it has some, read at once (its `readable` event
 * and `read()` until empty) rather than one promise per record. Nothing is read while the consumer
 * is busy with a chunk (inserting a batch), so the parser's buffer fills, the multipart stream
 * pauses, and the socket stops being read: memory stays flat whatever the file's size.
 *
 * A header row with a `phone_number` column, every other column a call variable. A row with too
 * few or too many fields is refused as `missing_column` / `extra_column`, a row the parser cannot
 * read (a stray or unclosed quote) as `malformed_row`; the parser skips it and goes on. A file
 * without a usable header is a 400.
 */
export async function* csvContacts(file: Readable): AsyncGenerator<ContactInput[]> {
  // Rows the parser skipped, by data-row number: told synchronously while it parses, so before any
  // later record reaches the loop below.
  const skipped = new Set<number>();
  let skippedCount = 0;
  const parser = parse({
    bom: true, relax_column_count: true, skip_empty_lines: true, max_record_size: 256 * 1024, skip_records_with_error: true,
    on_skip: () => {
      const emittedDataRows = Math.max(0, parser.info.records - 1);
      skipped.add(emittedDataRows + ++skippedCount);
    },
  });
  // pipeline: an error of the upload (too large, connection lost) ends the parser's iteration too.
  pipeline(file, parser, () => {});
  let header: string[] | undefined;
  let contact: ((row: number, record: string[]) => ContactInput) | undefined;
  let row = 0;
  try {
    for await (const _ of on(parser, 'readable', { close: ['end', 'close'] })) {
      const chunk: ContactInput[] = [];
      for (let record: string[] | null; (record = parser.read() as string[] | null) !== null;) {
        if (!contact) {
          header = checkHeader(record);
          contact = csvContact(header);
          continue;
        }
        row++;
        while (skipped.has(row)) chunk.push({ row: row++, reason: 'malformed_row' });
        chunk.push(contact(row, record));
      }
      if (chunk.length) yield chunk;
    }
    // Closed without its end (destroyed mid-file): the upload is incomplete, never taken as whole.
    if (!parser.readableEnded) throw new Error('the CSV stream closed before its end');
  } catch (err) {
    if (err instanceof CsvError) throw Errors.validation('The CSV file cannot be read', [{ path: 'body.file', message: err.message }]);
    throw err;
  } finally {
    if (!parser.destroyed) parser.destroy();
  }
  if (!header) throw Errors.validation('The CSV file is empty', [{ path: 'body.file', message: 'needs a header row with a phone_number column' }]);
  const late = [...skipped].filter((n) => n > row).sort((a, b) => a - b);
  if (late.length) yield late.map((n) => ({ row: n, reason: 'malformed_row' as const }));
}

/**
 * The file's records as contacts: the checks of `checkContact`, its header's names checked once
 * (`checkHeader`), only the values looked at per row.
 */
function csvContact(header: string[]): (row: number, record: string[]) => ContactInput {
  const phoneIndex = header.indexOf('phone_number');
  // Each row's variables are a copy of this object, so they all share its hidden class. Built key
  // by key from `{}`, every row's object got a hidden class (and descriptors) of its own in the
  // old generation, since the server's `{}` already has more shapes than V8 keeps transitions for:
  // that was most of a 100,000-row upload's memory growth.
  const template: Record<string, string> = Object.fromEntries(header.filter((_, i) => i !== phoneIndex).map((name) => [name, '']));
  return (row, record) => {
    if (record.length < header.length) return { row, reason: 'missing_column' };
    if (record.length > header.length) return { row, reason: 'extra_column' };
    const phoneNumber = record[phoneIndex]!.trim();
    if (!E164.test(phoneNumber)) return { row, reason: 'invalid_phone_number' };
    const variables = { ...template };
    for (let i = 0; i < header.length; i++) {
      if (i === phoneIndex) continue;
      const value = record[i]!;
      if (value.length > MAX_VARIABLE_LENGTH || unstorableText(value)) return { row, reason: 'invalid_variables' };
      variables[header[i]!] = value;
    }
    return { row, phoneNumber, variables };
  };
}

/** The contacts of a JSON body, in one chunk (the body is already in memory). */
export async function* jsonContacts(contacts: Array<{ phone_number: string; variables?: Record<string, string> }>): AsyncGenerator<ContactInput[]> {
  yield contacts.map((contact, i) => checkContact(i + 1, contact.phone_number, contact.variables ?? {}));
}
