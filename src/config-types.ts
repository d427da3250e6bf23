/**
 * The shapes of the typed configuration (config.ts reads them from the environment, config-sections.ts
 * reads its parts). Apart from the readers so that the sections can name them without a circle.
 */
import type { AllowedNetworks } from './adapters/http/outbound-addresses.ts';
import type { VoiceRuntimeConfig } from './config-voice-runtime.ts';

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
