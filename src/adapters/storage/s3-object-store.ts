import fs from 'node:fs';
import type { Readable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import {
  AbortMultipartUploadCommand, CompleteMultipartUploadCommand, CreateMultipartUploadCommand, DeleteObjectCommand, GetObjectCommand,
  HeadObjectCommand, PutObjectCommand, S3Client, UploadPartCommand,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { ByteRange, ObjectStore, StoredObject } from './object-store.ts';

export interface S3Options {
  bucket: string;
  region: string;
  endpoint: string | undefined;
  accessKeyId: string | undefined;
  secretAccessKey: string | undefined;
  forcePathStyle: boolean;
  /** Bytes of each part of a streamed upload (default 8 MiB; S3 wants at least 5 MiB but for the last). */
  partBytes?: number;
}

const DEFAULT_PART_BYTES = 8 * 1024 * 1024;
const RETRY_BASE_MS = 100;

/**
 * What the SDK's standard retry strategy retries: the connection failed before an answer, the store
 * throttled (429, SlowDown) or answered 500/502/503/504, or the error is marked retryable.
 */
const TRANSIENT_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT']);
const TRANSIENT_NAMES = new Set(['TimeoutError', 'RequestTimeout', 'SlowDown', 'Throttling', 'ThrottlingException']);
const TRANSIENT_STATUSES = new Set([429, 500, 502, 503, 504]);

function isTransient(err: unknown): boolean {
  const e = err as { name?: string; code?: string; $retryable?: unknown; $metadata?: { httpStatusCode?: number } } | undefined;
  if (!e || e.name === 'AbortError') return false;
  return e.$retryable !== undefined || TRANSIENT_CODES.has(e.code ?? '') || TRANSIENT_NAMES.has(e.name ?? '')
    || TRANSIENT_STATUSES.has(e.$metadata?.httpStatusCode ?? 0);
}

/**
 * The SDK's logger: its warnings go to standard error as the SDK's default does, but for its notice
 * that a failed streaming upload is not resent, which putFile does itself (below), so it would only
 * be noise next to an upload that succeeds on its next attempt.
 */
const SDK_LOGGER = {
  trace: () => {}, debug: () => {}, info: () => {},
  warn: (message: unknown, ...rest: unknown[]) => {
    if (!String(message).includes('non-retryable streaming request')) console.warn(message, ...rest);
  },
  error: (message: unknown, ...rest: unknown[]) => console.error(message, ...rest),
};

/** Any S3-compatible store (AWS, MinIO, R2...). */
export class S3ObjectStore implements ObjectStore {
  readonly kind = 's3' as const;
  readonly client: S3Client;
  readonly bucket: string;
  readonly #partBytes: number;
  constructor(options: S3Options) {
    this.bucket = options.bucket;
    this.#partBytes = options.partBytes ?? DEFAULT_PART_BYTES;
    this.client = new S3Client({
      region: options.region,
      endpoint: options.endpoint,
      forcePathStyle: options.forcePathStyle,
      credentials: options.accessKeyId && options.secretAccessKey ? { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey } : undefined,
      // Checksums only where S3 requires them: S3-compatible stores do not all speak the newer trailers.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      logger: SDK_LOGGER,
    });
  }

  /**
   * The SDK sends a request whose body is a stream once only (it cannot rewind the stream), so a
   * transient failure of this PUT is retried here, the file opened anew for each attempt, as many
   * attempts as the client's other commands get. Without this, a kept-alive connection that the store
   * closed for idleness just as the PUT went out on it ("socket hang up") failed the upload.
   */
  async putFile(key: string, filePath: string, contentType: string): Promise<StoredObject> {
    const { size } = await fs.promises.stat(filePath);
    const attempts = await this.client.config.maxAttempts();
    for (let attempt = 1; ; attempt++) {
      const body = fs.createReadStream(filePath);
      try {
        await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body, ContentLength: size, ContentType: contentType }));
        return { key, uri: this.uri(key), size };
      } catch (err) {
        body.destroy(); // a failed request leaves its body unread, holding the file open
        if (attempt >= attempts || !isTransient(err)) throw err;
        await delay(Math.random() * RETRY_BASE_MS * 2 ** (attempt - 1)); // the SDK's full-jitter backoff
      }
    }
  }

  /**
   * A multipart upload fed a part at a time (one part in memory); a stream shorter than one part is
   * a single PUT. On failure the upload is aborted, so no object and no orphan parts remain.
   */
  async putStream(key: string, source: Readable, contentType: string): Promise<StoredObject> {
    let parts: Buffer[] = [];
    let buffered = 0;
    let size = 0;
    let uploadId: string | undefined;
    const etags: Array<{ ETag: string | undefined; PartNumber: number }> = [];
    const flush = async () => {
      const body = Buffer.concat(parts, buffered);
      parts = [];
      buffered = 0;
      uploadId ??= (await this.client.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: key, ContentType: contentType }))).UploadId!;
      const PartNumber = etags.length + 1;
      const { ETag } = await this.client.send(new UploadPartCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId, PartNumber, Body: body, ContentLength: body.length }));
      etags.push({ ETag, PartNumber });
    };
    try {
      for await (const chunk of source) {
        const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
        parts.push(bytes);
        buffered += bytes.length;
        size += bytes.length;
        if (buffered >= this.#partBytes) await flush();
      }
      if (uploadId === undefined) {
        const body = Buffer.concat(parts, buffered);
        await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body, ContentLength: body.length, ContentType: contentType }));
      } else {
        if (buffered > 0) await flush();
        await this.client.send(new CompleteMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId, MultipartUpload: { Parts: etags } }));
      }
      return { key, uri: this.uri(key), size };
    } catch (err) {
      if (uploadId !== undefined) await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId })).catch(() => {});
      throw err;
    }
  }

  async read(key: string, range?: ByteRange): Promise<Readable> {
    const res = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key, Range: range ? `bytes=${range.start}-${range.end}` : undefined }));
    return res.Body as Readable;
  }

  async size(key: string): Promise<number | undefined> {
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return head.ContentLength;
    } catch (err) {
      if ((err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return undefined;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  uri(key: string): string {
    return `s3://${this.bucket}/${key}`;
  }

  /** A presigned GET (S3 serves Range requests on it), with the response headers S3 should send. */
  signedReadUrl(key: string, expiresInSeconds: number, response: { contentType: string; contentDisposition: string }): Promise<string> {
    const command = new GetObjectCommand({
      Bucket: this.bucket, Key: key, ResponseContentType: response.contentType, ResponseContentDisposition: response.contentDisposition,
    });
    return getSignedUrl(this.client, command, { expiresIn: expiresInSeconds });
  }
}
