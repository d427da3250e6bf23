import path from 'node:path';
import type { AllowedNetworks } from './adapters/http/outbound-addresses.ts';
import { ConfigError, flag, integer, url, type Env } from './config-readers.ts';
import { voiceRuntime, type VoiceRuntimeConfig } from './config-voice-runtime.ts';
import { adminEmail, allowedNetworks, trustProxy, embedder, encryptionKey, mail, mcpToken, metrics, payments, refuseUnsafeProduction, runtime, sip, storage, webhooks } from './config-sections.ts';

export { ConfigError } from './config-readers.ts';

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
  /** The address of the first run's admin user, who gets a printed sign-in link (`ADMIN_EMAIL`). */
  adminEmail: string;
  /** Keep API-key lookups in memory (revocations still apply on the next request; see credential-cache.ts). */
  authCache: boolean;
  /** Networks outbound requests (tool tests, webhooks) may reach although not global unicast. */
  allowedNetworks: AllowedNetworks;
  /** TRUST_PROXY: the reverse proxies (addresses or CIDR) whose X-Forwarded-For gives the client's address; none by default. */
  trustProxy: string[];
  /** Base64 of 32 bytes encrypting stored credentials; generated into `dataDir` when not given. */
  encryptionKey: string | undefined;
  carrier: CarrierConfig;
  sip: SipConfig;
  runtime: RuntimeConfig;
  storage: StorageConfig;
  jobs: JobsConfig;
  embedder: EmbedderConfig;
  /** Largest recording upload, in bytes. */
  recordingMaxBytes: number;
  /** Credits a dollar buys. */
  creditsPerDollar: number;
  mail: MailConfig;
  payments: PaymentsConfig;
  webhooks: WebhooksConfig;
  metrics: MetricsConfig;
  /** Bearer token `switchboard mcp --http` requires (`MCP_TOKEN`); one is generated at start when absent. */
  mcpToken: string | undefined;
}

/** Where `/metrics` is served (src/core/http/metrics.ts). */
export interface MetricsConfig {
  port: number | undefined;
  token: string | undefined;
}

/** Webhook deliveries: the request timeout (15 s) and the retry delays (the contract's schedule when undefined). */
export interface WebhooksConfig {
  timeoutMs: number;
  retryDelaysMs: number[] | undefined;
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
  /** Where the carrier reports the progress of calls (status callbacks). */
  statusUrl: string;
}

/** Where carrier calls are connected to the voice runtime: a media stream WebSocket, or a SIP address. */
export interface RuntimeConfig extends VoiceRuntimeConfig {
  streamUrl: string | undefined;
  sipUri: string | undefined;
  /** What the operator is told at start (a plain ws:// stream URL to another machine). */
  warnings: string[];
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


export function loadConfig(env: Env = process.env): Config {
  refuseUnsafeProduction(env);
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
    adminEmail: adminEmail(env),
    authCache: flag(env, 'AUTH_CACHE', true),
    allowedNetworks: allowedNetworks(env),
    trustProxy: trustProxy(env),
    encryptionKey: encryptionKey(env),
    carrier: {
      baseUrl: url(env, 'CARRIER_A_API_URL') ?? 'https://api.twilio.com',
      timeoutMs: integer(env, 'CARRIER_A_TIMEOUT_MS', 5000, 100, 60000),
      voiceUrl: url(env, 'CARRIER_A_VOICE_URL') ?? `${publicBaseUrl}/api/telephony/carrier_a/voice`,
      statusUrl: url(env, 'CARRIER_A_STATUS_URL') ?? `${publicBaseUrl}/api/telephony/carrier_a/status`,
    },
    runtime: { ...runtime(env), ...voiceRuntime(env, publicBaseUrl) },
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
    webhooks: webhooks(env),
    metrics: metrics(env),
    mcpToken: mcpToken(env),
  };
}
