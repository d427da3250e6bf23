import type pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');
const FILE_HEADER = SIGNATURE.length + 8; // flags, then the length of the header extension

export type CopyRow = Array<string | null>;

/**
 * The rows of a binary COPY of text columns, decoded chunk by chunk: each row's values as strings
 * (null for NULL), handed to `each` as soon as the row is whole. A value is its bytes as UTF-8,
 * nothing escaped (unlike COPY's text and CSV formats), so it may hold any character. A value
 * split between two chunks is gathered in one buffer kept for the whole copy; nothing else is kept
 * between rows.
 */
export class BinaryCopyRows {
  rows = 0;
  readonly #columns: number;
  readonly #header = Buffer.alloc(FILE_HEADER);
  #have = 0;
  #need = FILE_HEADER;
  #state: 'file' | 'skip' | 'count' | 'length' | 'value' | 'done' = 'file';
  /** Bytes still to come of the current value (or of the header extension, skipped). */
  #left = 0;
  /** The current value's bytes when it spans chunks. */
  #split = Buffer.alloc(0);
  #splitLength = 0;
  #row: CopyRow = [];

  constructor(columns: number) {
    this.#columns = columns;
  }

  write(chunk: Buffer, each: (row: CopyRow) => void): void {
    let at = 0;
    while (at < chunk.length) {
      if (this.#state === 'done') throw new Error('binary COPY: data after its trailer');
      if (this.#state === 'value' || this.#state === 'skip') {
        const n = Math.min(this.#left, chunk.length - at);
        if (this.#state === 'value') {
          if (n === this.#left && this.#splitLength === 0) this.#row.push(chunk.toString('utf8', at, at + n)); // whole in this chunk
          else this.#gather(chunk, at, n);
        }
        at += n;
        this.#left -= n;
        if (this.#left === 0) this.#valueDone(each);
        continue;
      }
      const n = Math.min(this.#need - this.#have, chunk.length - at);
      chunk.copy(this.#header, this.#have, at, at + n);
      this.#have += n;
      at += n;
      if (this.#have === this.#need) this.#headerRead(each);
    }
  }

  /** Throws unless the copy ended with its trailer. */
  end(): void {
    if (this.#state !== 'done') throw new Error('binary COPY: ended before its trailer');
  }

  #gather(chunk: Buffer, at: number, n: number) {
    const whole = this.#splitLength + this.#left; // the value's length: its bytes gathered and those still to come
    if (whole > this.#split.length) {
      const grown = Buffer.alloc(Math.max(2 * this.#split.length, whole));
      this.#split.copy(grown, 0, 0, this.#splitLength);
      this.#split = grown;
    }
    chunk.copy(this.#split, this.#splitLength, at, at + n);
    this.#splitLength += n;
    if (n === this.#left) {
      this.#row.push(this.#split.toString('utf8', 0, this.#splitLength));
      this.#splitLength = 0;
    }
  }

  #valueDone(each: (row: CopyRow) => void) {
    if (this.#state === 'skip') return this.#expect('count', 2);
    this.#fieldDone(each);
  }

  #fieldDone(each: (row: CopyRow) => void) {
    if (this.#row.length < this.#columns) return this.#expect('length', 4);
    const row = this.#row;
    this.#row = [];
    this.rows += 1;
    each(row);
    this.#expect('count', 2);
  }

  #expect(state: 'count' | 'length', bytes: number) {
    this.#state = state;
    this.#have = 0;
    this.#need = bytes;
  }

  #headerRead(each: (row: CopyRow) => void) {
    if (this.#state === 'file') {
      if (!this.#header.subarray(0, SIGNATURE.length).equals(SIGNATURE)) throw new Error('binary COPY: bad signature');
      this.#left = this.#header.readUInt32BE(SIGNATURE.length + 4);
      if (this.#left > 0) this.#state = 'skip';
      else this.#expect('count', 2);
    } else if (this.#state === 'count') {
      const fields = this.#header.readInt16BE(0);
      if (fields === -1) this.#state = 'done';
      else if (fields !== this.#columns) throw new Error(`binary COPY: ${fields} columns, ${this.#columns} expected`);
      else this.#expect('length', 4);
    } else {
      const length = this.#header.readInt32BE(0);
      if (length <= 0) {
        this.#row.push(length < 0 ? null : '');
        this.#fieldDone(each);
      } else {
        this.#left = length;
        this.#state = 'value';
      }
    }
  }
}

/**
 * `query`'s rows as a binary COPY's bytes, `COPY (...) TO STDOUT (FORMAT binary)` on a connection of
 * its own ($n parameters written in as literals: COPY takes none). The connection goes back to the
 * pool once the copy has ended, or is closed if the reader stopped before.
 */
export async function* copyBinary(pool: pg.Pool, query: { text: string; values: unknown[] }): AsyncGenerator<Buffer> {
  const client = await pool.connect();
  let finished = false;
  try {
    const text = query.text.replace(/\$(\d+)/gu, (_, n: string) => client.escapeLiteral(String(query.values[Number(n) - 1])));
    for await (const chunk of client.query(copyTo(`COPY (${text}) TO STDOUT (FORMAT binary)`))) yield chunk as Buffer;
    finished = true;
  } finally {
    client.release(!finished);
  }
}
