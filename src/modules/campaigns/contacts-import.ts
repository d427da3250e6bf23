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
 * The contacts of a CSV stream, parsed as it arrives (csv-parse, never the whole file in memory):
 * a header row with a `phone_number` column, every other column a call variable. A row with too
 * few or too many fields is refused as `missing_column` / `extra_column`, a row the parser cannot
 * read (a stray or unclosed quote) as `malformed_row`; the parser skips it and goes on. A file
 * without a usable header is a 400.
 */
export async function* csvContacts(file: Readable): AsyncGenerator<ContactInput> {
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
  let phoneIndex = -1;
  let row = 0;
  try {
    for await (const record of parser as AsyncIterable<string[]>) {
      if (!header) {
        header = checkHeader(record);
        phoneIndex = header.indexOf('phone_number');
        continue;
      }
      row++;
      while (skipped.has(row)) yield { row: row++, reason: 'malformed_row' };
      if (record.length < header.length) {
        yield { row, reason: 'missing_column' };
        continue;
      }
      if (record.length > header.length) {
        yield { row, reason: 'extra_column' };
        continue;
      }
      const variables: Record<string, string> = {};
      for (let i = 0; i < header.length; i++) if (i !== phoneIndex) variables[header[i]!] = record[i]!;
      yield checkContact(row, record[phoneIndex]!, variables);
    }
  } catch (err) {
    if (err instanceof CsvError) throw Errors.validation('The CSV file cannot be read', [{ path: 'body.file', message: err.message }]);
    throw err;
  } finally {
    if (!parser.destroyed) parser.destroy();
  }
  if (!header) throw Errors.validation('The CSV file is empty', [{ path: 'body.file', message: 'needs a header row with a phone_number column' }]);
  for (const late of [...skipped].filter((n) => n > row).sort((a, b) => a - b)) yield { row: late, reason: 'malformed_row' };
}

/** The contacts of a JSON body. */
export async function* jsonContacts(contacts: Array<{ phone_number: string; variables?: Record<string, string> }>): AsyncGenerator<ContactInput> {
  for (const [i, contact] of contacts.entries()) yield checkContact(i + 1, contact.phone_number, contact.variables ?? {});
}
