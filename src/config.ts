import path from 'node:path';
import { ConfigError, flag, integer, url, type Env } from './config-readers.ts';
import { voiceRuntime } from './config-voice-runtime.ts';
import type { Config } from './config-types.ts';
import { adminEmail, allowedNetworks, trustProxy, embedder, encryptionKey, mail, mcpToken, metrics, payments, refuseUnsafeProduction, runtime, sip, storage, webhooks } from './config-sections.ts';

export { ConfigError } from './config-readers.ts';
export type * from './config-types.ts';


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
