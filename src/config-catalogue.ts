/**
 * Every environment variable the server reads, with its default and meaning: the one list from which
 * `docs/configuration.md` is written (`npm run docs:config`). test/config-docs.test.ts fails when a
 * variable read in `src/config*.ts` is missing here, when one listed here is read nowhere, or when
 * the written page is not current. Values are Markdown.
 */

export interface ConfigVariable {
  /** The variable, or several set together (one row). */
  names: string[];
  defaultValue: string;
  meaning: string;
}

export interface ConfigGroup {
  title: string;
  variables: ConfigVariable[];
}

export const CONFIG_GROUPS: ConfigGroup[] = [
  { title: 'Server and HTTP', variables: [
    { names: ["PORT"], defaultValue: "`3000`", meaning: "HTTP port" },
    { names: ["HOST"], defaultValue: "`0.0.0.0`", meaning: "listen address" },
    { names: ["DATA_DIR"], defaultValue: "`./data`", meaning: "embedded database, files, generated secrets, `bootstrap.json`" },
    { names: ["LOG_LEVEL"], defaultValue: "`info`", meaning: "`fatal` … `trace`, or `silent`" },
    { names: ["PUBLIC_BASE_URL"], defaultValue: "`http://localhost:$PORT`", meaning: "base of the links the platform hands out" },
    { names: ["HTTP_HEADERS_TIMEOUT_SECONDS"], defaultValue: "`20`", meaning: "a request's headers must arrive within this (408 `request_timeout` otherwise)" },
    { names: ["HTTP_BODY_TIMEOUT_SECONDS"], defaultValue: "`30`", meaning: "the longest pause in a request body, and the deadline of an ordinary body; the connection is closed past it" },
    { names: ["UPLOAD_MIN_BYTES_PER_SECOND"], defaultValue: "`4096`", meaning: "the least average rate of a knowledge-base file or recording upload once the body timeout has passed (a slow link still works; a trickle is cut)" },
    { names: ["HTTP_IDLE_TIMEOUT_SECONDS"], defaultValue: "`120`", meaning: "a connection with no request in flight is closed after this" },
    { names: ["RATE_LIMIT_PER_MINUTE"], defaultValue: "`1200`", meaning: "requests a minute per API key or signed-in user" },
    { names: ["RATE_LIMIT_PUBLIC_PER_MINUTE"], defaultValue: "`300`", meaning: "requests a minute per client address without an accepted credential (public routes, and refused credentials)" },
    { names: ["REDIS_URL"], defaultValue: "—", meaning: "a Redis shared by several server processes for the rate-limit counts (in memory per process otherwise; if Redis fails, requests pass)" },
    { names: ["TRUST_PROXY"], defaultValue: "—", meaning: "addresses or networks of the reverse proxies in front of the server, comma-separated: only their `X-Forwarded-For` is believed for the client's address (API keys' `allowed_ips`, rate limits, the audit log)" },
    { names: ["NODE_ENV"], defaultValue: "—", meaning: "`production` turns on the refusals above (generated secrets, the local payment page)" },
  ] },
  { title: 'Database', variables: [
    { names: ["DATABASE_URL"], defaultValue: "—", meaning: "a PostgreSQL server (with pgvector) instead of the embedded database" },
    { names: ["DATABASE_POOL_SIZE"], defaultValue: "`10`", meaning: "connections of the app's pool" },
  ] },
  { title: 'Identity and secrets', variables: [
    { names: ["JWT_SECRET"], defaultValue: "generated into `DATA_DIR/jwt-secret`", meaning: "HS256 secret of the embedded identity provider; with `NODE_ENV=production`, set it (or `JWT_JWKS_URL`) or the server refuses to start unless `ALLOW_GENERATED_JWT_SECRET=true`" },
    { names: ["ALLOW_GENERATED_JWT_SECRET"], defaultValue: "`false`", meaning: "with `NODE_ENV=production`, accept the `JWT_SECRET` generated into `DATA_DIR` (one server only: other processes would not share it)" },
    { names: ["JWT_JWKS_URL"], defaultValue: "—", meaning: "JWKS of a production identity provider (then only its asymmetric tokens are accepted)" },
    { names: ["JWT_ISSUER"], defaultValue: "`switchboard-local`", meaning: "required `iss`" },
    { names: ["JWT_AUDIENCE"], defaultValue: "`switchboard`", meaning: "required `aud`" },
    { names: ["JWT_MAX_TTL_SECONDS"], defaultValue: "`86400` (24 h)", meaning: "longest accepted token lifetime, `exp - iat` (from now for a token without `iat`); `auth:token --ttl` stays within it" },
    { names: ["BOOTSTRAP"], defaultValue: "`true`", meaning: "create \"Default\", its admin user and admin key on an empty database" },
    { names: ["ADMIN_EMAIL"], defaultValue: "`admin@localhost`", meaning: "the first run's admin user, whose sign-in link is printed" },
    { names: ["AUTH_CACHE"], defaultValue: "`true`", meaning: "keep API-key lookups in memory; revocations still apply on the next request in every process" },
    { names: ["ENCRYPTION_KEY"], defaultValue: "generated into `DATA_DIR/encryption-key`", meaning: "base64 of 32 bytes encrypting stored credentials; with `NODE_ENV=production`, set it or the server refuses to start unless `ALLOW_GENERATED_ENCRYPTION_KEY=true`" },
    { names: ["ALLOW_GENERATED_ENCRYPTION_KEY"], defaultValue: "`false`", meaning: "with `NODE_ENV=production`, accept the `ENCRYPTION_KEY` generated into `DATA_DIR` (losing the file loses every stored credential)" },
    { names: ["MCP_TOKEN"], defaultValue: "generated and printed at start", meaning: "bearer token `switchboard mcp --http` requires (at least 16 characters); required to listen beyond loopback" },
  ] },
  { title: 'Telephony and the voice runtime', variables: [
    { names: ["CARRIER_A_API_URL"], defaultValue: "`https://api.twilio.com`", meaning: "base URL of the `carrier_a` REST API" },
    { names: ["CARRIER_A_TIMEOUT_MS"], defaultValue: "`5000`", meaning: "how long a provider call may take" },
    { names: ["CARRIER_A_VOICE_URL"], defaultValue: "`$PUBLIC_BASE_URL/api/telephony/carrier_a/voice`", meaning: "where imported carrier numbers send inbound calls (the voice runtime's answer webhook)" },
    { names: ["CARRIER_A_STATUS_URL"], defaultValue: "`$PUBLIC_BASE_URL/api/telephony/carrier_a/status`", meaning: "where imported carrier numbers report the progress of their calls (`StatusCallback`)" },
    { names: ["RUNTIME_STREAM_URL"], defaultValue: "—", meaning: "the voice runtime's media-stream WebSocket (`ws://` or `wss://`): answered carrier calls are connected to it with `<Connect><Stream>`. A query string is refused at start (the carrier passes values only as `<Parameter>`s); a plain `ws://` URL to another machine than this one (not `localhost`, `127.x`, `[::1]`) is warned about at start (call audio unencrypted)" },
    { names: ["RUNTIME_SIP_URI"], defaultValue: "—", meaning: "the voice runtime's SIP address (`sip:` or `sips:`), used with `<Dial><Sip>` when `RUNTIME_STREAM_URL` is not set" },
    { names: ["RUNTIME"], defaultValue: "`in-process`", meaning: "`in-process`: this server also runs the voice runtime, and carrier calls are connected to `{PUBLIC_BASE_URL as ws/wss}/api/runtime/carrier_a/stream` when neither `RUNTIME_STREAM_URL` nor `RUNTIME_SIP_URI` is set; `off`: no runtime here (scale-out: `switchboard runtime` processes), and with no URL configured carrier calls are refused with the reason on the call's `error`" },
    { names: ["RUNTIME_API_URL"], defaultValue: "`$PUBLIC_BASE_URL`", meaning: "where `switchboard runtime` processes reach the API (the in-process runtime uses the address the server listens on)" },
    { names: ["RUNTIME_DRAIN_SECONDS"], defaultValue: "`600`", meaning: "how long a stopping runtime lets its calls in progress go on (new streams are refused meanwhile)" },
    { names: ["PRICES_FILE"], defaultValue: "—", meaning: "a JSON object of provider prices in credits, replacing any of the defaults of [Voice runtime: prices](runtime.md#prices) (unknown names refuse to start)" },
    { names: ["SIP_BACKEND"], defaultValue: "`local`", meaning: "where SIP trunks live: `local` (the `sip_resources` table) or `livekit`" },
    { names: ["LIVEKIT_URL", "LIVEKIT_API_KEY", "LIVEKIT_API_SECRET"], defaultValue: "—", meaning: "the LiveKit server of `SIP_BACKEND=livekit`" },
    { names: ["LIVEKIT_TIMEOUT_SECONDS"], defaultValue: "`10`", meaning: "how long a LiveKit call may take" },
  ] },
  { title: 'Files, jobs and search', variables: [
    { names: ["STORAGE_BACKEND"], defaultValue: "`local`", meaning: "`local` (`DATA_DIR/objects`) or `s3`" },
    { names: ["S3_BUCKET", "S3_REGION", "S3_ENDPOINT", "S3_ACCESS_KEY_ID", "S3_SECRET_ACCESS_KEY", "S3_FORCE_PATH_STYLE"], defaultValue: "—, `us-east-1`, AWS, —, —, on with an endpoint", meaning: "the bucket of `STORAGE_BACKEND=s3`" },
    { names: ["IN_PROCESS_WORKER"], defaultValue: "`true`", meaning: "run job workers in the server process" },
    { names: ["JOB_EXPIRE_SECONDS"], defaultValue: "`300`", meaning: "how long an indexing job may run before it counts as lost and is retried" },
    { names: ["JOB_SUPERVISE_SECONDS", "JOB_POLL_SECONDS", "JOB_RETRY_LIMIT"], defaultValue: "`30`, `1`, `3`", meaning: "the job queue's pace" },
    { names: ["EMBEDDER"], defaultValue: "`hashed`", meaning: "`hashed` (built in) or `openai`" },
    { names: ["EMBEDDER_URL", "EMBEDDER_API_KEY", "EMBEDDER_MODEL", "EMBEDDER_TIMEOUT_MS"], defaultValue: "`https://api.openai.com/v1`, —, `text-embedding-3-small`, `30000`", meaning: "the endpoint of `EMBEDDER=openai`" },
    { names: ["RECORDING_MAX_BYTES"], defaultValue: "`1073741824` (1 GiB)", meaning: "largest recording upload" },
  ] },
  { title: 'Billing and mail', variables: [
    { names: ["CREDITS_PER_DOLLAR"], defaultValue: "`100`", meaning: "credits a dollar buys" },
    { names: ["PAYMENT_PROVIDER"], defaultValue: "`local`", meaning: "`local` (the platform's own checkout page) or `stripe`; with `NODE_ENV=production`, `local` refuses to start unless `ALLOW_LOCAL_PAYMENTS=true` (it credits whoever clicks Pay)" },
    { names: ["ALLOW_LOCAL_PAYMENTS"], defaultValue: "`false`", meaning: "with `NODE_ENV=production`, accept `PAYMENT_PROVIDER=local` (a demo: it credits whoever clicks Pay)" },
    { names: ["STRIPE_SECRET_KEY", "STRIPE_WEBHOOK_SECRET"], defaultValue: "—", meaning: "the Stripe account of `PAYMENT_PROVIDER=stripe`" },
    { names: ["STRIPE_API_URL", "STRIPE_TIMEOUT_MS"], defaultValue: "Stripe's, `10000`", meaning: "the Stripe API address (a stand-in in tests) and its timeout" },
    { names: ["CHECKOUT_SUCCESS_URL", "CHECKOUT_CANCEL_URL"], defaultValue: "`$PUBLIC_BASE_URL/api/billing/checkout/return?result=…`", meaning: "where the payer returns after checkout" },
    { names: ["MAILER"], defaultValue: "`outbox`", meaning: "`outbox` (stored in the database and logged) or `smtp`" },
    { names: ["SMTP_URL"], defaultValue: "—", meaning: "the server of `MAILER=smtp`, e.g. `smtp://user:pass@mail.example.com:587`" },
    { names: ["MAIL_FROM"], defaultValue: "`Switchboard <no-reply@switchboard.local>`", meaning: "sender of platform email" },
  ] },
  { title: 'Webhooks, outbound requests and metrics', variables: [
    { names: ["WEBHOOK_TIMEOUT_SECONDS"], defaultValue: "`15`", meaning: "how long a webhook receiver may take to answer (1-15; the contract's 15, lower in tests)" },
    { names: ["WEBHOOK_RETRY_DELAYS_SECONDS"], defaultValue: "the contract's `5,300,1800,7200,18000,36000,36000`", meaning: "the delays before attempts 2, 3, … (tests use `1,1,1,1,1,1,1`)" },
    { names: ["ALLOWED_NETWORKS", "TOOL_ALLOWED_NETWORKS"], defaultValue: "—", meaning: "networks outbound requests (tool tests, webhooks) may reach although not global unicast, comma-separated CIDRs or addresses, e.g. `127.0.0.1/32,10.2.0.0/16,fd00::/8`; both names set to different values is an error" },
    { names: ["METRICS_PORT"], defaultValue: "—", meaning: "serve `GET /metrics` (Prometheus) on a listener of its own at this port (servers and `switchboard worker` processes alike)" },
    { names: ["METRICS_TOKEN"], defaultValue: "—", meaning: "bearer token `/metrics` requires; without `METRICS_PORT`, `/metrics` is then served on the API's port. Neither set: no `/metrics`" },
  ] },
];
