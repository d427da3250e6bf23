import { pipeline, Readable, Transform, type TransformCallback } from 'node:stream';
import type pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');
const FILE_HEADER = SIGNATURE.length + 8; // flags, then the length of the header extension

/**
 * The values of a binary COPY of one non-null column, byte for byte one after another: the format's
 * framing (file header, per row a field count and a length, trailer) taken off. A text column is
 * copied out as its bytes, nothing escaped, so a value may hold any character (CSV line breaks
 * included). Each chunk in gives at most one chunk out (the same memory); `rows` counts the values.
 */
export class CopyValues extends Transform {
  rows = 0;
  readonly #header = Buffer.alloc(FILE_HEADER);
  #have = 0;
  #need = FILE_HEADER;
  #state: 'file' | 'count' | 'length' | 'skip' | 'value' | 'done' = 'file';
  /** Bytes still to come of the current value (or of the header extension, skipped). */
  #left = 0;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    // The values are moved to the front of the chunk itself (they never overtake the reading
    // position): a chunk in is a chunk out, and no buffer is allocated.
    const out = chunk;
    let written = 0;
    let at = 0;
    while (at < chunk.length) {
      if (this.#state === 'value' || this.#state === 'skip') {
        const n = Math.min(this.#left, chunk.length - at);
        if (this.#state === 'value') written += chunk.copy(out, written, at, at + n);
        at += n;
        this.#left -= n;
        if (this.#left === 0) this.#expect('count', 2);
        continue;
      }
      if (this.#state === 'done') return done(new Error('binary COPY: data after its trailer'));
      const n = Math.min(this.#need - this.#have, chunk.length - at);
      chunk.copy(this.#header, this.#have, at, at + n);
      this.#have += n;
      at += n;
      if (this.#have < this.#need) break;
      const error = this.#headerRead();
      if (error) return done(error);
    }
    done(null, written > 0 ? out.subarray(0, written) : undefined);
  }

  override _flush(done: TransformCallback): void {
    done(this.#state === 'done' ? null : new Error('binary COPY: ended before its trailer'));
  }

  #expect(state: 'count' | 'length', bytes: number) {
    this.#state = state;
    this.#have = 0;
    this.#need = bytes;
  }

  #headerRead(): Error | undefined {
    if (this.#state === 'file') {
      if (!this.#header.subarray(0, SIGNATURE.length).equals(SIGNATURE)) return new Error('binary COPY: bad signature');
      this.#left = this.#header.readUInt32BE(SIGNATURE.length + 4);
      if (this.#left > 0) this.#state = 'skip';
      else this.#expect('count', 2);
    } else if (this.#state === 'count') {
      const fields = this.#header.readInt16BE(0);
      if (fields === -1) this.#state = 'done';
      else if (fields !== 1) return new Error(`binary COPY: ${fields} columns, one expected`);
      else this.#expect('length', 4);
    } else {
      const length = this.#header.readInt32BE(0);
      if (length < 0) return new Error('binary COPY: a null value');
      this.rows += 1;
      this.#left = length;
      if (length > 0) this.#state = 'value';
      else this.#expect('count', 2);
    }
    return undefined;
  }
}

/**
 * `query`'s values ($n parameters written in as literals: COPY takes none), streamed from the
 * server with `COPY (...) TO STDOUT (FORMAT binary)` on a connection of its own. The connection
 * goes back to the pool once the copy has ended, or is closed if the reader stopped before.
 */
export async function* copyValues(pool: pg.Pool, query: { text: string; values: unknown[] }, counts: { rows: number }): AsyncGenerator<Buffer> {
  const client = await pool.connect();
  let finished = false;
  try {
    const text = query.text.replace(/\$(\d+)/gu, (_, n: string) => client.escapeLiteral(String(query.values[Number(n) - 1])));
    const copy = client.query(copyTo(`COPY (${text}) TO STDOUT (FORMAT binary)`));
    const values = new CopyValues();
    pipeline(copy, values, () => {}); // an error of either ends the loop below with it
    for await (const chunk of values as Readable) yield chunk as Buffer;
    counts.rows = values.rows;
    finished = true;
  } finally {
    client.release(!finished);
  }
}
