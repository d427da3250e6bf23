import path from 'node:path';
import type { Config } from '../config.ts';
import type { Db } from '../db/database.ts';
import type { Logger } from '../core/logger.ts';
import type { Embedder } from './embedding/embedder.ts';
import type { ObjectStore } from './storage/object-store.ts';
import type { Mailer } from './mail/mailer.ts';
import type { PaymentProvider } from './payments/payment-provider.ts';
import type { SipTrunks } from './sip/sip-trunks.ts';
import type { Redis } from 'ioredis';
import { resolveJwtSecret, resolveSessionSecret, TokenVerifier } from '../core/auth/tokens.ts';
import { resolveEncryptionKey, SecretBox } from '../core/secret-box.ts';
import { CarrierClient } from './carrier/carrier-client.ts';

/*
 * The configured implementation of each adapter interface. Providers' SDKs are imported only when
 * configured, so a process on the embedded defaults never loads the AWS SDK, LiveKit or nodemailer.
 */

/** `DATA_DIR/objects` by default, or an S3-compatible bucket. */
export async function createObjectStore(config: Config): Promise<ObjectStore> {
  const storage = config.storage;
  if (storage.backend === 's3') return new (await import('./storage/s3-object-store.ts')).S3ObjectStore(storage);
  return new (await import('./storage/object-store.ts')).LocalObjectStore(path.join(config.dataDir, 'objects'));
}

export async function createEmbedder(config: Config): Promise<Embedder> {
  const { HashedEmbedder, OpenAiEmbedder } = await import('./embedding/embedder.ts');
  return config.embedder.kind === 'openai' ? new OpenAiEmbedder(config.embedder) : new HashedEmbedder();
}

/** `outbox` (the database, and the log) by default, or an SMTP server. */
export async function createMailer(config: Config, db: Db, log: Logger): Promise<Mailer> {
  if (config.mail.kind === 'smtp') return new (await import('./mail/smtp-mailer.ts')).SmtpMailer(config.mail.url, config.mail.from);
  return new (await import('./mail/mailer.ts')).OutboxMailer(db, log);
}

/** SIP trunks recorded in the database (`local`), or a LiveKit server's. */
export async function createSipTrunks(config: Config, db: Db): Promise<SipTrunks> {
  if (config.sip.backend === 'livekit') return new (await import('./sip/livekit-sip-trunks.ts')).LiveKitSipTrunks(config.sip);
  return new (await import('./sip/sip-trunks.ts')).LocalSipTrunks(db);
}

/** The platform's own checkout page (`local`), or Stripe Checkout. */
export async function createPaymentProvider(config: Config, platformSecret: Buffer): Promise<PaymentProvider> {
  const { payments } = config;
  if (payments.stripe) {
    const { StripePayments } = await import('./payments/stripe-payments.ts');
    return new StripePayments({ ...payments.stripe, successUrl: payments.successUrl, cancelUrl: payments.cancelUrl });
  }
  return new (await import('./payments/local-payments.ts')).LocalPayments(config.publicBaseUrl, platformSecret);
}

/** The Redis of REDIS_URL (shared rate-limit counts), when configured. */
export async function createRedis(config: Config): Promise<Redis | undefined> {
  if (!config.rateLimit.redisUrl) return undefined;
  const { Redis } = await import('ioredis');
  // Fail fast rather than queue: a request must not wait on a Redis that is down.
  return new Redis(config.rateLimit.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 2000 });
}

/** The implementations of the adapter interfaces, chosen by config. */
export interface Adapters {
  store: ObjectStore;
  embedder: Embedder;
  /** Built on first use: only processes that send mail load a mail transport. */
  mailer: () => Promise<Mailer>;
  carrier: CarrierClient;
  sip: SipTrunks;
  payments: PaymentProvider;
  secrets: SecretBox;
  tokens: TokenVerifier;
  /** Shared counters of several processes (REDIS_URL), when configured. */
  redis: Redis | undefined;
}

/** Every adapter of a process: the configured implementation of each, or the one given (tests: a stand-in, a spy). */
export async function buildAdapters(config: Config, database: { db: Db }, log: Logger, given: Partial<Adapters>): Promise<Adapters> {
  const encryptionKey = resolveEncryptionKey(config.encryptionKey, config.dataDir);
  let mailer: Promise<Mailer> | undefined;
  return {
    store: given.store ?? (await createObjectStore(config)),
    embedder: given.embedder ?? (await createEmbedder(config)),
    mailer: given.mailer ?? (() => (mailer ??= createMailer(config, database.db, log))),
    carrier: given.carrier ?? new CarrierClient(config.carrier),
    sip: given.sip ?? (await createSipTrunks(config, database.db)),
    payments: given.payments ?? (await createPaymentProvider(config, encryptionKey)),
    secrets: given.secrets ?? new SecretBox(encryptionKey),
    tokens: given.tokens ?? new TokenVerifier(config.jwt, resolveJwtSecret(config.jwt, config.dataDir), resolveSessionSecret(config.jwt, config.dataDir)),
    redis: given.redis ?? (await createRedis(config)),
  };
}
