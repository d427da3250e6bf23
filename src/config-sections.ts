import { parseNetworks, type AllowedNetworks } from './adapters/http/outbound-addresses.ts';
import type { EmbedderConfig, MailConfig, MetricsConfig, PaymentsConfig, RuntimeConfig, SipConfig, StorageConfig, WebhooksConfig } from './config-types.ts';
import { ConfigError, flag, integer, url, type Env } from './config-readers.ts';
import { isEmailAddress } from './core/email.ts';

// The sections of the configuration that choose an adapter and carry its settings (read by loadConfig).

/** `ALLOWED_NETWORKS`, or its older name `TOOL_ALLOWED_NETWORKS`; both set must agree. */
export function allowedNetworks(env: Env): AllowedNetworks {
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

/**
 * `TRUST_PROXY`: comma-separated addresses or networks of the reverse proxies in front of the
 * server. Only a request from one of them has its client address taken from X-Forwarded-For (for
 * API keys' allowed_ips, rate limits and the audit log); by default the socket's address is used.
 */
export function trustProxy(env: Env): string[] {
  const raw = env.TRUST_PROXY?.trim();
  if (!raw) return [];
  try {
    parseNetworks(raw);
  } catch (err) {
    throw new ConfigError(`TRUST_PROXY must be comma-separated IP addresses or networks of the proxies (e.g. 127.0.0.1,10.0.0.0/8): ${(err as Error).message}`);
  }
  return raw.split(',').map((entry) => entry.trim()).filter(Boolean);
}

/** `ADMIN_EMAIL`, lowercased: the first run's admin user (default admin@localhost). */
export function adminEmail(env: Env): string {
  const value = (env.ADMIN_EMAIL || 'admin@localhost').trim().toLowerCase();
  // The same rule as the API's, so the first run's admin can always ask for a sign-in link.
  if (!isEmailAddress(value)) throw new ConfigError(`ADMIN_EMAIL must be an e-mail address, got "${value}"`);
  return value;
}

export function encryptionKey(env: Env): string | undefined {
  const raw = env.ENCRYPTION_KEY;
  if (raw === undefined || raw === '') return undefined;
  if (Buffer.from(raw, 'base64').length !== 32) throw new ConfigError('ENCRYPTION_KEY must be base64 of 32 bytes (openssl rand -base64 32)');
  return raw;
}

export function sip(env: Env): SipConfig {
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

export function storage(env: Env): StorageConfig {
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

export function embedder(env: Env): EmbedderConfig {
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

export function payments(env: Env, publicBaseUrl: string): PaymentsConfig {
  const provider = env.PAYMENT_PROVIDER || 'local';
  if (provider !== 'local' && provider !== 'stripe') throw new ConfigError(`PAYMENT_PROVIDER must be local or stripe, got "${provider}"`);
  const urls = {
    successUrl: url(env, 'CHECKOUT_SUCCESS_URL') ?? `${publicBaseUrl}/billing?checkout=success`,
    cancelUrl: url(env, 'CHECKOUT_CANCEL_URL') ?? `${publicBaseUrl}/billing?checkout=cancelled`,
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

export function mail(env: Env): MailConfig {
  const kind = env.MAILER || 'outbox';
  const from = env.MAIL_FROM || 'Switchboard <no-reply@switchboard.local>';
  if (kind === 'outbox') return { kind, from };
  if (kind !== 'smtp') throw new ConfigError(`MAILER must be outbox or smtp, got "${kind}"`);
  const smtpUrl = env.SMTP_URL;
  if (!smtpUrl || !/^smtps?:\/\//.test(smtpUrl)) throw new ConfigError('MAILER=smtp needs SMTP_URL (smtp://user:pass@host:port or smtps://...)');
  return { kind, url: smtpUrl, from };
}

/** The contract's delivery timeout and retry schedule (extensions.md §1); shorter values are for tests. */
export function webhooks(env: Env): WebhooksConfig {
  const timeoutMs = integer(env, 'WEBHOOK_TIMEOUT_SECONDS', 15, 1, 15) * 1000;
  const raw = env.WEBHOOK_RETRY_DELAYS_SECONDS;
  if (raw === undefined || raw === '') return { timeoutMs, retryDelaysMs: undefined };
  const delays = raw.split(',').map((part) => Number(part.trim()));
  if (delays.length === 0 || delays.length > 20 || delays.some((d) => !Number.isInteger(d) || d < 1 || d > 86_400)) {
    throw new ConfigError(`WEBHOOK_RETRY_DELAYS_SECONDS must be up to 20 comma-separated whole seconds (1 to 86400), got "${raw}"`);
  }
  return { timeoutMs, retryDelaysMs: delays.map((d) => d * 1000) };
}

const LOOPBACK_HOST = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i;

/**
 * RUNTIME_STREAM_URL (ws:// or wss://) and RUNTIME_SIP_URI (sip: or sips:), where carrier calls reach
 * the voice runtime. The stream URL takes no query string: the carrier passes values to the stream
 * only as `<Parameter>`s (and drops a query), so a query would silently never arrive. A plain ws://
 * URL carries the call's audio unencrypted: fine on the same machine, warned about elsewhere.
 */
export function runtime(env: Env): Pick<RuntimeConfig, 'streamUrl' | 'sipUri' | 'warnings'> {
  const streamUrl = env.RUNTIME_STREAM_URL || undefined;
  const sipUri = env.RUNTIME_SIP_URI || undefined;
  const warnings: string[] = [];
  if (streamUrl) {
    let parsed: URL | undefined;
    try {
      parsed = /^wss?:\/\/[^\s]+$/.test(streamUrl) ? new URL(streamUrl) : undefined;
    } catch {
      // refused below
    }
    if (!parsed || !parsed.hostname) throw new ConfigError(`RUNTIME_STREAM_URL must be a ws:// or wss:// URL, got "${streamUrl}"`);
    if (parsed.search || streamUrl.includes('?')) {
      throw new ConfigError(`RUNTIME_STREAM_URL must not have a query string ("${parsed.search || '?'}"): the carrier passes values to the stream only as <Parameter>s (call_sid, agent_id)`);
    }
    if (parsed.protocol === 'ws:' && !LOOPBACK_HOST.test(parsed.hostname)) {
      warnings.push(`RUNTIME_STREAM_URL is plain ws:// to ${parsed.hostname}, not this machine: call audio travels unencrypted; use wss://`);
    }
  }
  if (sipUri && !/^sips?:[^\s]+$/.test(sipUri)) throw new ConfigError(`RUNTIME_SIP_URI must be a sip: or sips: URI, got "${sipUri}"`);
  return { streamUrl, sipUri, warnings };
}

/** `METRICS_PORT` (a listener of its own) and `METRICS_TOKEN` (bearer); neither: `/metrics` is not served. */
export function metrics(env: Env): MetricsConfig {
  return {
    port: env.METRICS_PORT ? integer(env, 'METRICS_PORT', 0, 0, 65535) : undefined,
    token: env.METRICS_TOKEN || undefined,
  };
}

/** `MCP_TOKEN`: long enough not to be guessed over the network (the MCP server may listen beyond loopback with it). */
export function mcpToken(env: Env): string | undefined {
  const token = env.MCP_TOKEN || undefined;
  if (token !== undefined && (token.length < 16 || /\s/.test(token))) throw new ConfigError('MCP_TOKEN must be at least 16 characters, without spaces (e.g. openssl rand -base64 32)');
  return token;
}

/**
 * With NODE_ENV=production, the conveniences of the embedded defaults that would be unsafe for
 * customers refuse to start unless each is allowed by name: the identity provider's secret and the
 * encryption key generated into DATA_DIR (one disk away from forging tokens and reading every
 * stored credential). The local payment page has its own refusal in `payments`.
 */
export function refuseUnsafeProduction(env: Env): void {
  if (env.NODE_ENV !== 'production') return;
  if (!env.JWT_SECRET && !env.JWT_JWKS_URL && !flag(env, 'ALLOW_GENERATED_JWT_SECRET', false)) {
    throw new ConfigError('With NODE_ENV=production set JWT_JWKS_URL (your identity provider) or JWT_SECRET (the embedded one\'s secret, from your secret store), or ALLOW_GENERATED_JWT_SECRET=true to sign with the secret generated into DATA_DIR');
  }
  if (!env.ENCRYPTION_KEY && !flag(env, 'ALLOW_GENERATED_ENCRYPTION_KEY', false)) {
    throw new ConfigError('With NODE_ENV=production set ENCRYPTION_KEY (openssl rand -base64 32, from your secret store), or ALLOW_GENERATED_ENCRYPTION_KEY=true to encrypt with the key generated into DATA_DIR');
  }
}
