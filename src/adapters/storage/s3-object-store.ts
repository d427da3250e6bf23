import fs from 'node:fs';
import type { Readable } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { ByteRange, ObjectStore, StoredObject } from './object-store.ts';

export interface S3Options {
  bucket: string;
  region: string;
  endpoint: string | undefined;
  accessKeyId: string | undefined;
  secretAccessKey: string | undefined;
  forcePathStyle: boolean;
}

/** Any S3-compatible store (AWS, MinIO, R2...). */
export class S3ObjectStore implements ObjectStore {
  readonly kind = 's3' as const;
  readonly client: S3Client;
  readonly bucket: string;
  constructor(options: S3Options) {
    this.bucket = options.bucket;
    this.client = new S3Client({
      region: options.region,
      endpoint: options.endpoint,
      forcePathStyle: options.forcePathStyle,
      credentials: options.accessKeyId && options.secretAccessKey ? { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey } : undefined,
      // Checksums only where S3 requires them: S3-compatible stores do not all speak the newer trailers.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  async putFile(key: string, filePath: string, contentType: string): Promise<StoredObject> {
    const { size } = await fs.promises.stat(filePath);
    await this.client.send(new PutObjectCommand({
      Bucket: this.bucket, Key: key, Body: fs.createReadStream(filePath), ContentLength: size, ContentType: contentType,
    }));
    return { key, uri: this.uri(key), size };
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
