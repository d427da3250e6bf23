import path from 'node:path';
import type { Config } from '../config.ts';
import { HashedEmbedder, OpenAiEmbedder, type Embedder } from './embedding/embedder.ts';
import { LocalObjectStore, type ObjectStore } from './storage/object-store.ts';
import { S3ObjectStore } from './storage/s3-object-store.ts';
import { OutboxMailer, SmtpMailer, type Mailer } from './mail/mailer.ts';
import type { Db } from '../db/database.ts';

/** The configured object store: `DATA_DIR/objects` by default, or an S3-compatible bucket. */
export function createObjectStore(config: Config): ObjectStore {
  const storage = config.storage;
  if (storage.backend === 's3') return new S3ObjectStore(storage);
  return new LocalObjectStore(path.join(config.dataDir, 'objects'));
}

export function createEmbedder(config: Config): Embedder {
  return config.embedder.kind === 'openai' ? new OpenAiEmbedder(config.embedder) : new HashedEmbedder();
}

/** `outbox` (the database, and the log when one is given) by default, or an SMTP server. */
export function createMailer(config: Config, db: Db, log?: { info(obj: object, message: string): void }): Mailer {
  return config.mail.kind === 'smtp' ? new SmtpMailer(config.mail.url, config.mail.from) : new OutboxMailer(db, log);
}
