import fs from 'node:fs';
import type { ServerResponse } from 'node:http';

const CHUNK = 256 * 1024;

/**
 * Writes bytes `start`..`end` (inclusive) of a file to a response through two reused buffers: a
 * buffer is read into again only once the socket has taken its previous contents. A stream would
 * allocate a fresh buffer per read and leave hundreds of megabytes of a large recording to the
 * garbage collector; this holds 512 KB whatever the file's size.
 */
export async function sendFileRange(res: ServerResponse, file: string, start: number, end: number): Promise<void> {
  const handle = await fs.promises.open(file, 'r');
  const buffers = [Buffer.allocUnsafeSlow(CHUNK), Buffer.allocUnsafeSlow(CHUNK)];
  const flushed: Array<Promise<void>> = [Promise.resolve(), Promise.resolve()];
  const closed = new Promise<never>((_, reject) => res.once('close', () => { if (!res.writableFinished) reject(new Error('client went away')); }));
  closed.catch(() => {});
  try {
    let position = start;
    for (let turn = 0; position <= end; turn++) {
      const slot = turn % 2;
      await Promise.race([flushed[slot], closed]);
      const buffer = buffers[slot]!;
      const { bytesRead } = await handle.read(buffer, 0, Math.min(CHUNK, end - position + 1), position);
      if (bytesRead === 0) throw new Error('the file is shorter than its recorded size');
      flushed[slot] = new Promise<void>((resolve, reject) => res.write(buffer.subarray(0, bytesRead), (err) => (err ? reject(err) : resolve())));
      position += bytesRead;
    }
    await Promise.race([Promise.all(flushed), closed]);
    res.end();
  } catch {
    res.destroy();
  } finally {
    await handle.close();
  }
}
