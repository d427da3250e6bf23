import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';

export interface StoredObject {
  key: string;
  /** `file://...` or `s3://bucket/key`. */
  uri: string;
  size: number;
}

export interface ByteRange {
  start: number;
  /** Inclusive. */
  end: number;
}

/**
 * Where uploaded files and recordings live. Keys are chosen by the platform
 * (`<org>/<area>/<id>/<name>`), never by the client.
 */
export interface ObjectStore {
  readonly kind: 'local' | 's3';
  /** Stores a file spooled to local disk (the upload paths spool first, so sizes are known and limits enforced). */
  putFile(key: string, filePath: string, contentType: string): Promise<StoredObject>;
  /**
   * Stores a stream of unknown length as it arrives (exports): memory stays bounded by a part, the
   * object appears whole or not at all. A failing source leaves no object.
   */
  putStream(key: string, source: Readable, contentType: string): Promise<StoredObject>;
  read(key: string, range?: ByteRange): Promise<Readable>;
  /** Size in bytes, or undefined when there is no such object. */
  size(key: string): Promise<number | undefined>;
  /** Deleting a missing object succeeds. */
  delete(key: string): Promise<void>;
  uri(key: string): string;
  /** The object's path on this machine, when the store is local disk (large files are then sent without a stream). */
  filePath?(key: string): string;
  /**
   * A URL that reads the object without credentials until it expires, with the response headers
   * given (S3 presigned GET; Range works on it). Absent on stores that cannot sign (local disk: the
   * app serves signed links of its own).
   */
  signedReadUrl?(key: string, expiresInSeconds: number, response: { contentType: string; contentDisposition: string }): Promise<string>;
}

/** Files under `DATA_DIR/objects`. */
export class LocalObjectStore implements ObjectStore {
  readonly kind = 'local' as const;
  readonly #root: string;
  constructor(root: string) {
    this.#root = path.resolve(root);
    fs.mkdirSync(this.#root, { recursive: true, mode: 0o700 });
  }

  async putFile(key: string, filePath: string): Promise<StoredObject> {
    const target = this.#path(key);
    await fs.promises.mkdir(path.dirname(target), { recursive: true });
    // A temporary name of its own: concurrent writers of one key never share a partial file.
    const temporary = `${target}.${randomBytes(6).toString('hex')}.part`;
    try {
      await pipeline(fs.createReadStream(filePath), fs.createWriteStream(temporary, { mode: 0o600 }));
      const { size } = await fs.promises.stat(temporary);
      await fs.promises.rename(temporary, target); // readers never see half a file
      return { key, uri: this.uri(key), size };
    } catch (err) {
      await fs.promises.rm(temporary, { force: true });
      throw err;
    }
  }

  async putStream(key: string, source: Readable): Promise<StoredObject> {
    const target = this.#path(key);
    await fs.promises.mkdir(path.dirname(target), { recursive: true });
    const temporary = `${target}.${randomBytes(6).toString('hex')}.part`;
    try {
      await pipeline(source, fs.createWriteStream(temporary, { mode: 0o600 }));
      const { size } = await fs.promises.stat(temporary);
      await fs.promises.rename(temporary, target);
      return { key, uri: this.uri(key), size };
    } catch (err) {
      await fs.promises.rm(temporary, { force: true });
      throw err;
    }
  }

  async read(key: string, range?: ByteRange): Promise<Readable> {
    const file = this.#path(key);
    await fs.promises.access(file);
    return fs.createReadStream(file, range ? { start: range.start, end: range.end } : {});
  }

  async size(key: string): Promise<number | undefined> {
    try {
      return (await fs.promises.stat(this.#path(key))).size;
    } catch {
      return undefined;
    }
  }

  async delete(key: string): Promise<void> {
    await fs.promises.rm(this.#path(key), { force: true });
  }

  uri(key: string): string {
    return `file://${this.#path(key)}`;
  }

  filePath(key: string): string {
    return this.#path(key);
  }

  #path(key: string): string {
    const resolved = path.resolve(this.#root, key);
    if (!resolved.startsWith(this.#root + path.sep)) throw new Error(`Object key escapes the store: ${key}`);
    return resolved;
  }
}
