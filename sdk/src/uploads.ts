import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';

/** A file to upload: a path on this machine, a Blob (or File), or a stream; never read into memory whole. */
export type FileSource = string | Blob | ReadableStream<Uint8Array> | Readable;

export function toStream(source: FileSource): ReadableStream<Uint8Array> {
  if (typeof source === 'string') return Readable.toWeb(fs.createReadStream(source)) as ReadableStream<Uint8Array>;
  if (source instanceof Blob) return source.stream();
  if (source instanceof Readable) return Readable.toWeb(source) as ReadableStream<Uint8Array>;
  return source;
}

export function fileNameOf(source: FileSource, given?: string): string {
  if (given) return given;
  if (typeof source === 'string') return path.basename(source);
  if (typeof File !== 'undefined' && source instanceof File) return source.name;
  return 'upload';
}

const encoder = new TextEncoder();

/**
 * A multipart/form-data body as a stream: the fields, then the file as it is read. A boundary of
 * random characters cannot occur in the fields; the file's bytes are not scanned (as every client does).
 */
export function multipartStream(fields: Record<string, string | undefined>, file: { name: string; contentType: string; stream: ReadableStream<Uint8Array> }) {
  const boundary = `----switchboard${crypto.randomUUID().replace(/-/g, '')}`;
  const quote = (value: string) => value.replace(/["\r\n\\]/g, '_');
  const head = Object.entries(fields)
    .filter((entry): entry is [string, string] => entry[1] !== undefined)
    .map(([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${quote(name)}"\r\n\r\n${value}\r\n`)
    .join('') + `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${quote(file.name)}"\r\nContent-Type: ${file.contentType}\r\n\r\n`;
  const reader = file.stream.getReader();
  let stage: 'head' | 'file' | 'done' = 'head';
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (stage === 'head') {
        controller.enqueue(encoder.encode(head));
        stage = 'file';
        return;
      }
      if (stage === 'file') {
        const { value, done } = await reader.read();
        if (!done) return controller.enqueue(value);
        stage = 'done';
        controller.enqueue(encoder.encode(`\r\n--${boundary}--\r\n`));
        return controller.close();
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}
