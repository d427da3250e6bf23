import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

export class TooLargeError extends Error {
  override name = 'TooLargeError';
}

export interface SpooledFile {
  path: string;
  size: number;
  /** The first bytes, for content sniffing. */
  head: Buffer;
  discard(): Promise<void>;
}

const HEAD_BYTES = 8192;

/**
 * With `keepSource`, a refused source is left alone (paused), so an HTTP request can still be
 * answered with 413 before its connection is closed.
 *
 * Streams an upload to a temporary file, counting bytes as they pass: past `maxBytes` the stream
 * is abandoned and the file removed, so an oversized upload is refused without being held whole.
 */
export async function spool(source: Readable, options: { dir: string; maxBytes: number; keepSource?: boolean }): Promise<SpooledFile> {
  await fs.promises.mkdir(options.dir, { recursive: true, mode: 0o700 });
  const file = path.join(options.dir, `upload-${randomBytes(8).toString('hex')}`);
  let size = 0;
  const headParts: Buffer[] = [];
  let headSize = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      if (size > options.maxBytes) return done(new TooLargeError(`The upload exceeds ${options.maxBytes} bytes`));
      if (headSize < HEAD_BYTES) {
        headParts.push(chunk.subarray(0, HEAD_BYTES - headSize));
        headSize += Math.min(chunk.length, HEAD_BYTES - headSize);
      }
      done(null, chunk);
    },
  });
  const discard = () => fs.promises.rm(file, { force: true });
  try {
    if (options.keepSource) {
      // The source is a request body the caller still answers on: it is detached, not destroyed.
      source.pipe(counter);
      counter.once('error', () => source.unpipe(counter));
      source.once('error', (err) => counter.destroy(err));
      await pipeline(counter, fs.createWriteStream(file, { mode: 0o600 }));
    } else {
      await pipeline(source, counter, fs.createWriteStream(file, { mode: 0o600 }));
    }
  } catch (err) {
    await discard();
    throw err;
  }
  return { path: file, size, head: Buffer.concat(headParts), discard };
}
