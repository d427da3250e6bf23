import path from 'node:path';
import { parseNetworks, type AllowedNetworks } from './adapters/http/outbound-addresses.ts';

/** Typed configuration, read once from the environment by the process entry and passed in. */
export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /** A PostgreSQL server; when absent the embedded PGlite database in `dataDir` is used. */
  databaseUrl: string | undefined;
  databasePoolSize: number;
  logLevel: string;
  /** Base URL the platform is reached at, used for links it hands out. */
  publicBaseUrl: string;
  jwt: JwtConfig;
  http: HttpConfig;
  rateLimit: RateLimitConfig;
  /** Whether to create the "Default" organization and its admin key on an empty database. */
  bootstrap: boolean;
  /** Keep API-key lookups in memory (revocations still apply on the next request; see credential-cache.ts). */
  authCache: boolean;
  /** Networks outbound requests (tool tests, webhooks) may reach although not global unicast. */
  allowedNetworks: AllowedNetworks;
  /** Base64 of 32 bytes encrypting stored credentials; generated into `dataDir` when not given. */
  encryptionKey: string | undefined;
  carrier: CarrierConfig;
  sip: SipConfig;
  storage: StorageConfig;
  jobs: JobsConfig;
  embedder: EmbedderConfig;
  /** Largest recording upload, in bytes. */
  recordingMaxBytes: number;
  /** Credits a dollar buys. */
  creditsPerDollar: number;
  mail: MailConfig;
  payments: PaymentsConfig;
}

/** How long a client may take to send a request (src/core/http/timeouts.ts). */
export interface HttpConfig {
  headersTimeoutMs: number;
  /** The longest pause in a body, and the deadline of an ordinary body. */
  bodyTimeoutMs: number;
  /** The least average rate of a large upload (knowledge-base files, recordings), after the body timeout. */
  uploadMinBytesPerSecond: number;
  /** A connection with nothing in flight is closed after this long. */
  idleTimeoutMs: number;
}

/** Requests a minute per API key or user, and per client address for anonymous traffic. */
export interface RateLimitConfig {
  perMinute: number;
  publicPerMinute: number;
  /** Shared counters for several server processes. */
  redisUrl: string | undefined;
}

export interface PaymentsConfig {
  /** `local`: the platform's own checkout page (no money moves); `stripe`: Stripe Checkout. */
  provider: 'local' | 'stripe';
  stripe: { secretKey: string; webhookSecret: string; apiUrl: string | undefined; timeoutMs: number } | undefined;
  /** Where the provider sends the payer back; returning there credits nothing by itself. */
  successUrl: string;
  cancelUrl: string;
}

/** `outbox`: mail kept in the database and logged; `smtp`: sent through an SMTP server. */
export type MailConfig = { kind: 'outbox'; from: string } | { kind: 'smtp'; url: string; from: string };

export type StorageConfig =
  | { backend: 'local' }
  | { backend: 's3'; bucket: string; region: string; endpoint: string | undefined; accessKeyId: string | undefined; secretAccessKey: string | undefined; forcePathStyle: boolean };

export interface JobsConfig {
  /** Run the job workers inside the server process (false: run `switchboard worker` beside it). */
  inProcessWorker: boolean;
  /** How long an indexing job may run before it counts as lost (its worker died) and is retried. */
  expireSeconds: number;
  /** How often expired jobs are looked for. */
  superviseSeconds: number;
  pollSeconds: number;
  retryLimit: number;
}

/** `hashed`: the built-in deterministic lexical embedder; `openai`: any OpenAI-compatible /embeddings endpoint. */
export type EmbedderConfig =
  | { kind: 'hashed' }
  | { kind: 'openai'; url: string; apiKey: string | undefined; model: string; timeoutMs: number };

export interface CarrierConfig {
  /** Twilio-compatible REST API of `carrier_a`. */
  baseUrl: string;
  timeoutMs: number;
  /** Where imported numbers send their inbound calls (the voice runtime's answer webhook). */
  voiceUrl: string;
}

/** Where SIP trunks of imported SIP numbers live: the database (`local`) or a LiveKit server. */
export type SipConfig =
  | { backend: 'local' }
  | { backend: 'livekit'; url: string; apiKey: string; apiSecret: string; timeoutSeconds: number };

export interface JwtConfig {
  /** HS256 secret of the embedded identity provider; read from `dataDir` when not given. */
  secret: string | undefined;
  /** JWKS URL of a production identity provider; when set, HS256 tokens are not accepted. */
  jwksUrl: string | undefined;
  issuer: string;
  audience: string;
  /** Longest accepted token lifetime, `exp - iat` (from now for a token without `iat`). */
  maxTtlSeconds: number;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

function url(env: Env, name: string): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  try {
    new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be a URL, got "${raw}"`);
  }
  return raw;
}

function flag(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'yes'].includes(raw.toLowerCase())) return true;
  if (['0', 'false', 'no'].includes(raw.toLowerCase())) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

/** `ALLOWED_NETWORKS`, or its older name `TOOL_ALLOWED_NETWORKS`; both set must agree. */
function allowedNetworks(env: Env): AllowedNetworks {
  const given = (['ALLOWED_NETWORKS', 'TOOL_ALLOWED_NETWORKS'] as const).filter((name) => env[name]);
  if (given.length === 2 && env.ALLOWED_NETWORKS !== env.TOOL_ALLOWED_NETWORKS) {
    throw new ConfigError('ALLOWED_NETWORKS and its alias TOOL_ALLOWED_NETWORKS are both set, to different values: set one');
  }
  const name = given[0];
  if (!name) return [];
  try {
    return parseNetworks(env[name]!);
  } catch (err) {
    throw new ConfigError(`${name} must be comma-separated IP networks (e.g. 127.0.0.1/32,10.2.0.0/16): ${(err as Error).message}`);
  }
}

function encryptionKey(env: Env): string | undefined {
  const raw = env.ENCRYPTION_KEY;
  if (raw === undefined || raw === '') return undefined;
  if (Buffer.from(raw, 'base64').length !== 32) throw new ConfigError('ENCRYPTION_KEY must be base64 of 32 bytes (openssl rand -base64 32)');
  return raw;
}

function sip(env: Env): SipConfig {
  const backend = env.SIP_BACKEND || 'local';
  if (backend === 'local') return { backend };
  if (backend !== 'livekit') throw new ConfigError(`SIP_BACKEND must be local or livekit, got "${backend}"`);
  const liveKitUrl = url(env, 'LIVEKIT_URL');
  if (!liveKitUrl || !env.LIVEKIT_API_KEY || !env.LIVEKIT_API_SECRET) {
    throw new ConfigError('SIP_BACKEND=livekit needs LIVEKIT_URL, LIVEKIT_API_KEY and LIVEKIT_API_SECRET');
  }
  return {
    backend,
    url: liveKitUrl,
    apiKey: env.LIVEKIT_API_KEY,
    apiSecret: env.LIVEKIT_API_SECRET,
    timeoutSeconds: integer(env, 'LIVEKIT_TIMEOUT_SECONDS', 10, 1, 60),
  };
}

function storage(env: Env): StorageConfig {
  const backend = env.STORAGE_BACKEND || 'local';
  if (backend === 'local') return { backend };
  if (backend !== 's3') throw new ConfigError(`STORAGE_BACKEND must be local or s3, got "${backend}"`);
  if (!env.S3_BUCKET) throw new ConfigError('STORAGE_BACKEND=s3 needs S3_BUCKET');
  const endpoint = url(env, 'S3_ENDPOINT');
  return {
    backend,
    bucket: env.S3_BUCKET,
    region: env.S3_REGION || 'us-east-1',
    endpoint,
    accessKeyId: env.S3_ACCESS_KEY_ID || undefined,
    secretAccessKey: env.S3_SECRET_ACCESS_KEY || undefined,
    forcePathStyle: flag(env, 'S3_FORCE_PATH_STYLE', endpoint !== undefined),
  };
}

function embedder(env: Env): EmbedderConfig {
  const kind = env.EMBEDDER || 'hashed';
  if (kind === 'hashed') return { kind };
  if (kind !== 'openai') throw new ConfigError(`EMBEDDER must be hashed or openai, got "${kind}"`);
  return {
    kind,
    url: url(env, 'EMBEDDER_URL') ?? 'https://api.openai.com/v1',
    apiKey: env.EMBEDDER_API_KEY || undefined,
    model: env.EMBEDDER_MODEL || 'text-embedding-3-small',
    timeoutMs: integer(env, 'EMBEDDER_TIMEOUT_MS', 30000, 100, 600000),
  };
}

function payments(env: Env, publicBaseUrl: string): PaymentsConfig {
  const provider = env.PAYMENT_PROVIDER || 'local';
  if (provider !== 'local' && provider !== 'stripe') throw new ConfigError(`PAYMENT_PROVIDER must be local or stripe, got "${provider}"`);
  const urls = {
    successUrl: url(env, 'CHECKOUT_SUCCESS_URL') ?? `${publicBaseUrl}/api/billing/checkout/return?result=success`,
    cancelUrl: url(env, 'CHECKOUT_CANCEL_URL') ?? `${publicBaseUrl}/api/billing/checkout/return?result=cancelled`,
  };
  if (provider === 'local') {
    // The local provider credits whoever clicks Pay: fine for a laptop, a demo or a test, never for customers.
    if (env.NODE_ENV === 'production' && !flag(env, 'ALLOW_LOCAL_PAYMENTS', false)) {
      throw new ConfigError('PAYMENT_PROVIDER=local gives credits without payment; with NODE_ENV=production set PAYMENT_PROVIDER=stripe, or ALLOW_LOCAL_PAYMENTS=true to run it anyway');
    }
    return { provider, stripe: undefined, ...urls };
  }
  if (!env.STRIPE_SECRET_KEY || !env.STRIPE_WEBHOOK_SECRET) {
    throw new ConfigError('PAYMENT_PROVIDER=stripe needs STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET');
  }
  return {
    provider,
    stripe: {
      secretKey: env.STRIPE_SECRET_KEY,
      webhookSecret: env.STRIPE_WEBHOOK_SECRET,
      apiUrl: url(env, 'STRIPE_API_URL'),
      timeoutMs: integer(env, 'STRIPE_TIMEOUT_MS', 10000, 100, 60000),
    },
    ...urls,
  };
}

function mail(env: Env): MailConfig {
  const kind = env.MAILER || 'outbox';
  const from = env.MAIL_FROM || 'Switchboard <no-reply@switchboard.local>';
  if (kind === 'outbox') return { kind, from };
  if (kind !== 'smtp') throw new ConfigError(`MAILER must be outbox or smtp, got "${kind}"`);
  const smtpUrl = env.SMTP_URL;
  if (!smtpUrl || !/^smtps?:\/\//.test(smtpUrl)) throw new ConfigError('MAILER=smtp needs SMTP_URL (smtp://user:pass@host:port or smtps://...)');
  return { kind, url: smtpUrl, from };
}

export function loadConfig(env: Env = process.env): Config {
  const port = integer(env, 'PORT', 3000, 0, 65535);
  const publicBaseUrl = (url(env, 'PUBLIC_BASE_URL') ?? `http://localhost:${port}`).replace(/\/$/, '');
  const logLevel = env.LOG_LEVEL || 'info';
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent`);
  }
  return {
    port,
    host: env.HOST || '0.0.0.0',
    dataDir: path.resolve(env.DATA_DIR || './data'),
    databaseUrl: url(env, 'DATABASE_URL'),
    databasePoolSize: integer(env, 'DATABASE_POOL_SIZE', 10, 1, 200),
    logLevel,
    publicBaseUrl,
    jwt: {
      secret: env.JWT_SECRET || undefined,
      jwksUrl: url(env, 'JWT_JWKS_URL'),
      issuer: env.JWT_ISSUER || 'switchboard-local',
      audience: env.JWT_AUDIENCE || 'switchboard',
      maxTtlSeconds: integer(env, 'JWT_MAX_TTL_SECONDS', 86_400, 60, 31_536_000),
    },
    http: {
      headersTimeoutMs: integer(env, 'HTTP_HEADERS_TIMEOUT_SECONDS', 20, 1, 600) * 1000,
      bodyTimeoutMs: integer(env, 'HTTP_BODY_TIMEOUT_SECONDS', 30, 1, 3600) * 1000,
      uploadMinBytesPerSecond: integer(env, 'UPLOAD_MIN_BYTES_PER_SECOND', 4096, 1, 1_000_000_000),
      idleTimeoutMs: integer(env, 'HTTP_IDLE_TIMEOUT_SECONDS', 120, 1, 3600) * 1000,
    },
    rateLimit: {
      perMinute: integer(env, 'RATE_LIMIT_PER_MINUTE', 1200, 1, 100_000_000),
      publicPerMinute: integer(env, 'RATE_LIMIT_PUBLIC_PER_MINUTE', 300, 1, 100_000_000),
      redisUrl: url(env, 'REDIS_URL'),
    },
    bootstrap: flag(env, 'BOOTSTRAP', true),
    authCache: flag(env, 'AUTH_CACHE', true),
    allowedNetworks: allowedNetworks(env),
    encryptionKey: encryptionKey(env),
    carrier: {
      baseUrl: url(env, 'CARRIER_A_API_URL') ?? 'https://api.twilio.com',
      timeoutMs: integer(env, 'CARRIER_A_TIMEOUT_MS', 5000, 100, 60000),
      voiceUrl: url(env, 'CARRIER_A_VOICE_URL') ?? `${publicBaseUrl}/api/telephony/carrier_a/voice`,
    },
    sip: sip(env),
    storage: storage(env),
    jobs: {
      inProcessWorker: flag(env, 'IN_PROCESS_WORKER', true),
      expireSeconds: integer(env, 'JOB_EXPIRE_SECONDS', 300, 1, 86400),
      superviseSeconds: integer(env, 'JOB_SUPERVISE_SECONDS', 30, 1, 3600),
      pollSeconds: integer(env, 'JOB_POLL_SECONDS', 1, 1, 60),
      retryLimit: integer(env, 'JOB_RETRY_LIMIT', 3, 0, 20),
    },
    embedder: embedder(env),
    recordingMaxBytes: integer(env, 'RECORDING_MAX_BYTES', 1024 ** 3, 1024, 16 * 1024 ** 3),
    creditsPerDollar: integer(env, 'CREDITS_PER_DOLLAR', 100, 1, 1_000_000),
    mail: mail(env),
    payments: payments(env, publicBaseUrl),
  };
}
