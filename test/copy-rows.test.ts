import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BinaryCopyRows, type CopyRow } from '../src/db/copy-rows.ts';

/**
 * The binary COPY decoder (copy-rows.ts) on bytes written here from the format's description
 * (PostgreSQL's COPY page, "Binary Format"): an 11-byte signature, a 32-bit flags field, a 32-bit
 * header-extension length and that many bytes; per row a 16-bit field count, then per field a 32-bit
 * length (-1 for NULL) and the bytes; a 16-bit -1 trailer. Fed in chunks of every size, so that
 * every length, count and value is split somewhere, multi-byte characters included.
 */

function copyBytes(rows: CopyRow[], extension = Buffer.alloc(0), count?: number): Buffer {
  const parts = [Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'), Buffer.alloc(4), Buffer.alloc(4)];
  parts[2]!.writeUInt32BE(extension.length);
  parts.push(extension);
  for (const row of rows) {
    const n = Buffer.alloc(2);
    n.writeInt16BE(count ?? row.length);
    parts.push(n);
    for (const value of row) {
      const length = Buffer.alloc(4);
      const bytes = value === null ? Buffer.alloc(0) : Buffer.from(value, 'utf8');
      length.writeInt32BE(value === null ? -1 : bytes.length);
      parts.push(length, bytes);
    }
  }
  const trailer = Buffer.alloc(2);
  trailer.writeInt16BE(-1);
  parts.push(trailer);
  return Buffer.concat(parts);
}

function decode(bytes: Buffer, columns: number, chunk: number): CopyRow[] {
  const reader = new BinaryCopyRows(columns);
  const rows: CopyRow[] = [];
  for (let at = 0; at < bytes.length; at += chunk) reader.write(bytes.subarray(at, at + chunk), (row) => rows.push(row));
  reader.end();
  assert.equal(reader.rows, rows.length);
  return rows;
}

describe('binary COPY rows', () => {
  const rows: CopyRow[] = [
    ['call_1', null, '', 'a,b "c"\r\nd'],
    ['日本語 🙂 café', 'x'.repeat(70_000), null, null],
    ['', '', '', ''],
    ['é', '🙂', 'line\nbreak', 'plain'],
  ];

  test('each row whole and in order, whatever the chunks (1 byte to all at once), with a header extension skipped', () => {
    const bytes = copyBytes(rows, Buffer.from('ext!'));
    for (const chunk of [1, 2, 3, 5, 7, 13, 64, 1000, 65_536, bytes.length]) assert.deepEqual(decode(bytes, 4, chunk), rows, `chunks of ${chunk}`);
  });

  test('no rows is no rows; one column is one value a row', () => {
    assert.deepEqual(decode(copyBytes([]), 4, 1), []);
    const lines = [['{"a":1}\n'], ['{"b":"日本"}\n']];
    assert.deepEqual(decode(copyBytes(lines), 1, 3), lines);
  });

  test('a wrong signature, a row of another width, data after the trailer or a missing trailer are errors', () => {
    const bytes = copyBytes(rows);
    const bad = Buffer.from(bytes);
    bad[0] = 0x51;
    assert.throws(() => decode(bad, 4, 64), /bad signature/);
    assert.throws(() => decode(copyBytes([['a', 'b']]), 4, 64), /2 columns, 4 expected/);
    assert.throws(() => decode(Buffer.concat([bytes, Buffer.from([0, 1])]), 4, 64), /after its trailer/);
    assert.throws(() => decode(bytes.subarray(0, bytes.length - 1), 4, 64), /before its trailer/);
    assert.throws(() => decode(bytes.subarray(0, 40), 4, 7), /before its trailer/);
  });
});
