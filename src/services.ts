import path from 'node:path';
import type { Config } from './config.ts';
import type { Database } from './db/database.ts';
import { createLogger, type Logger } from './core/logger.ts';
import { Authenticator } from './core/auth/authenticator.ts';
import { resolveSessionSecret } from './core/auth/tokens.ts';
import { resolveEncryptionKey } from './core/secret-box.ts';
import { buildAdapters, type Adapters } from './adapters/factories.ts';
import { JobQueue } from './jobs/queue.ts';
import type { JobDefinition, JobUnit } from './jobs/job.ts';
import { MODULES, type PlatformModule } from './registry.ts';
import { CallExportService } from './modules/calls/exports/service.ts';
import { AgentService } from './modules/agents/service.ts';
import { AnalyticsService } from './modules/analytics/service.ts';
import { ApiKeyCredentials } from './modules/api-keys/credential-queries.ts';
import { ApiKeyService } from './modules/api-keys/service.ts';
import { CachedKeyLookup, CredentialCache } from './modules/api-keys/credential-cache.ts';
import { LocalRevocations, SharedRevocations, type Revocations } from './modules/api-keys/revocations.ts';
import type { ApiKeyLookup } from './core/auth/ports.ts';
import { BillingService } from './modules/billing/service.ts';
import { CallService, type CallPlacer } from './modules/calls/service.ts';
import { AuditService } from './modules/audit/service.ts';
import type { Metrics } from './core/metrics.ts';
import { createProcessMetrics } from './process-metrics.ts';
import { DataSettingsService } from './modules/data-settings/service.ts';
import { LimitsService } from './modules/limits/service.ts';
import { CampaignDialer } from './modules/campaigns/dialer.ts';
import { CampaignOutcomes } from './modules/campaigns/outcomes.ts';
import { CampaignService } from './modules/campaigns/service.ts';
import { TelephonyService } from './modules/telephony/service.ts';
import { OutboundDialing } from './modules/telephony/dialing.ts';
import { PreviewSessions } from './modules/calls/preview/sessions.ts';
import { RecordingService } from './modules/calls/recordings/service.ts';
import { CallAnalysisService } from './modules/calls/analysis/service.ts';
import { runtimeLanguageModel } from './adapters/providers/analysis-llm.ts';
import { IdempotencyService } from './modules/idempotency/service.ts';
import { IntegrationService } from './modules/integrations/service.ts';
import { RuntimeService } from './modules/runtime/service.ts';
import { CallTokens } from './core/auth/call-tokens.ts';
import { validateProvider } from '@switchboard/runtime';
import { InvitationService } from './modules/invitations/service.ts';
import { KnowledgeBaseService } from './modules/knowledge-base/service.ts';
import { MemberService } from './modules/organizations/members.ts';
import { OrganizationService } from './modules/organizations/service.ts';
import { UserAccounts } from './modules/organizations/user-accounts.ts';
import { PhoneNumberService } from './modules/phone-numbers/service.ts';
import { SystemService } from './modules/system/service.ts';
import { CONTRACT_RETRY_DELAYS_MS, WebhookDeliverer } from './modules/events/delivery.ts';
import { WEBHOOK_ATTEMPTS_IN_FLIGHT, WEBHOOK_LEASE_MARGIN_MS, WEBHOOK_POLL_MS, WebhookDispatcher } from './modules/events/dispatcher.ts';
import { EventService } from './modules/events/service.ts';
import { EventOutbox } from './platform/outbox.ts';
import { WebhookService } from './modules/events/webhook-service.ts';
import { ToolService } from './modules/tools/service.ts';
import { SessionService } from './modules/sessions/service.ts';

/**
 * The registry's modules, each checked here against the services below: a module that names a
 * service the composition root does not build, or with another type, does not compile.
 */
export const PLATFORM_MODULES: readonly PlatformModule<Services>[] = MODULES;

/** Every queue of the platform, from the modules that own them. */
export const JOB_DEFINITIONS: readonly JobDefinition[] = PLATFORM_MODULES.flatMap((m) => m.jobs ?? []);

/** Everything a process of the platform runs on, built once. */
export interface Services {
  config: Config;
  database: Database;
  log: Logger;
  queue: JobQueue;
  adapters: Adapters;
  authenticator: Authenticator;
  system: SystemService;
  organizations: OrganizationService;
  members: MemberService;
  invitations: InvitationService;
  apiKeys: ApiKeyService;
  agents: AgentService;
  tools: ToolService;
  integrations: IntegrationService;
  /** What a voice runtime reads and calls with a call token (extensions.md §10). */
  runtime: RuntimeService;
  callTokens: CallTokens;
  phoneNumbers: PhoneNumberService;
  knowledgeBase: KnowledgeBaseService;
  calls: CallService;
  recordings: RecordingService;
  callExports: CallExportService;
  /** Post-call analysis (extensions.md §13): queued as calls end, rerun on request. */
  callAnalysis: CallAnalysisService;
  billing: BillingService;
  analytics: AnalyticsService;
  dataSettings: DataSettingsService;
  audit: AuditService;
  limits: LimitsService;
  /** The transactional outbox every service emits its events through. */
  outbox: EventOutbox;
  /** Sends the outbox's due webhook deliveries; started with the workers (src/workers.ts). */
  webhookDispatcher: WebhookDispatcher;
  events: EventService;
  webhooks: WebhookService;
  idempotency: IdempotencyService;
  campaigns: CampaignService;
  /** Calls the contacts of running campaigns (its ticks are jobs; tests drive it directly with their clock). */
  dialer: CampaignDialer;
  telephony: TelephonyService;
  /** Places outbound calls: POST /api/calls/dial and every campaign call. */
  dialing: OutboundDialing;
  previewSessions: PreviewSessions;
  /** Sign-in by e-mail link and console sessions. */
  sessions: SessionService;
  /** The handlers of every queue, from the registry's modules; the workers register them (src/workers.ts). */
  jobs: JobUnit[];
  /** Prometheus metrics of this process (served at /metrics, src/core/http/metrics.ts). */
  metrics: Metrics;
  /** Stops what these services started (the job queue, when it was made here). */
  close(): Promise<void>;
}

export interface ServiceOptions {
  /** The process's logger; made from config when not given. */
  log?: Logger;
  /** Adapters to use instead of the configured ones (tests: a stand-in, a spy). */
  adapters?: Partial<Adapters>;
  /** A queue shared with other service sets (tests share one per run); it is started and stopped by its owner. */
  queue?: JobQueue;
  /** Start the job queue (default): every process that serves requests or works jobs needs it; a one-off CLI command does not. */
  startQueue?: boolean;
  /** Timers and idle connections of the queue do not keep the process alive (tests, one-off commands). */
  background?: boolean;
  /** The clock of webhook deliveries and events (tests move it to reach the 5-day rule). */
  now?: () => Date;
  /** How campaign calls are placed (default: with the from number's provider, as dial places them). */
  placer?: CallPlacer;
}

/**
 * How API keys are found: in the database on every request, or (AUTH_CACHE, the default) from a
 * cache that every revocation clears in every process before it is answered: in-process on the
 * embedded database (one server owns it), through LISTEN/NOTIFY with acknowledgements on a server.
 */
function credentialLookup(config: Config, database: Database, log: Logger): { keys: ApiKeyLookup; revocations: Revocations } {
  const source = new ApiKeyCredentials({ database });
  let cache: CredentialCache | undefined;
  const revocations: Revocations = database.kind === 'server'
    ? new SharedRevocations({ connection: database.connection, db: database.db, log, cache: () => cache! })
    : new LocalRevocations({ cache: () => cache! });
  cache = new CredentialCache(revocations);
  if (!config.authCache) return { keys: source, revocations };
  return { keys: new CachedKeyLookup({ source, cache, beforeLookup: () => revocations.start() }), revocations };
}

/**
 * The one composition root: adapters and services built once from config, each service given its
 * dependencies as one object. The server, `switchboard worker`, the CLI and the tests all build
 * their processes here. The job queue starts before any route can send to it.
 */
export async function buildServices(config: Config, database: Database, options: ServiceOptions = {}): Promise<Services> {
  const log = options.log ?? createLogger(config.logLevel);
  const adapters = await buildAdapters(config, database, log, options.adapters ?? {});
  const ownQueue = !options.queue;
  const queue = options.queue ?? new JobQueue({
    connection: database.connection, config: config.jobs, log, definitions: JOB_DEFINITIONS, background: options.background,
  });
  if (options.startQueue ?? true) await queue.start();

  const { db } = database;
  const { now } = options;
  const outbox = new EventOutbox({ now });
  const metrics = createProcessMetrics(database, queue, now);
  const credentials = credentialLookup(config, database, log);
  const audit = new AuditService({ db });
  const apiKeys = new ApiKeyService({ db, revocations: credentials.revocations, outbox, audit });
  const organizations = new OrganizationService({ db, audit });
  const integrations = new IntegrationService({
    db, secrets: adapters.secrets, carrier: adapters.carrier, audit, providers: { validate: validateProvider }, allowedNetworks: config.allowedNetworks,
  });
  const agents = new AgentService({ db, outbox, audit, integrations });
  const analytics = new AnalyticsService({ database });
  const billing = new BillingService({ db, provider: adapters.payments, creditsPerDollar: config.creditsPerDollar, organizations, log, outbox, audit });
  const dataSettings = new DataSettingsService({ db, audit });
  const limits = new LimitsService({ db, rateLimitPerMinute: config.rateLimit.perMinute });
  const encryptionKey = resolveEncryptionKey(config.encryptionKey, config.dataDir);
  const deliverer = new WebhookDeliverer({
    db, queue, secrets: adapters.secrets, now, metrics,
    settings: {
      timeoutMs: config.webhooks.timeoutMs, retryDelaysMs: config.webhooks.retryDelaysMs ?? CONTRACT_RETRY_DELAYS_MS,
      disableAfterFailingMs: 5 * 86_400_000, allowedNetworks: config.allowedNetworks,
    },
  });
  const webhookDispatcher = new WebhookDispatcher({
    db, deliverer, log, now, concurrency: WEBHOOK_ATTEMPTS_IN_FLIGHT, pollMs: WEBHOOK_POLL_MS, leaseMs: config.webhooks.timeoutMs + WEBHOOK_LEASE_MARGIN_MS,
  });
  const events = new EventService({ db, organizations, mailer: adapters.mailer, now });
  const idempotency = new IdempotencyService({ database });
  const calls = new CallService({ database, agents, billing, analytics, dataSettings, limits, outbox, audit });
  const phoneNumbers = new PhoneNumberService({
    db, secrets: adapters.secrets, carrier: adapters.carrier, voiceUrl: config.carrier.voiceUrl, statusUrl: config.carrier.statusUrl, sip: adapters.sip, integrations, agents, outbox, audit,
  });
  const invitations = new InvitationService({ database, queue, organizations, outbox, audit });
  const sessions = new SessionService({
    db, mailer: adapters.mailer, publicBaseUrl: config.publicBaseUrl, jwt: config.jwt, sessionSecret: resolveSessionSecret(config.jwt, config.dataDir), log,
    mayReceiveLink: async (email) => (await organizations.hasUserWithEmail(email)) || (await invitations.hasPendingFor(email)),
    subjectFor: (email) => organizations.signInSubject(email),
  });
  const callExports = new CallExportService({
    database, queue, store: adapters.store, linkSecret: encryptionKey, publicBaseUrl: config.publicBaseUrl, audit, log, retryLimit: config.jobs.retryLimit,
  });
  const campaigns = new CampaignService({ database, queue, agents, phoneNumbers, audit });
  const callAnalysis = new CallAnalysisService({
    database, queue, agents, integrations, billing, analytics, outbox, audit, llm: runtimeLanguageModel, prices: config.runtime.prices, log, retryLimit: config.jobs.retryLimit,
  });
  // A call that ends with a transcript queues its analysis in the same transaction.
  calls.onEndedTranscript(callAnalysis);
  const dialerNow = now ?? (() => new Date());
  // Signed with the embedded secret whatever signs user tokens: only this server issues call tokens.
  const callTokens = new CallTokens(resolveSessionSecret(config.jwt, config.dataDir));
  const tools = new ToolService({ db, allowedNetworks: config.allowedNetworks, audit });
  const telephony = new TelephonyService({
    db, calls, agents, integrations, urls: { voice: config.carrier.voiceUrl, status: config.carrier.statusUrl }, runtime: config.runtime, log, callTokens, carrier: adapters.carrier,
  });
  // The runtime's final report hangs up (or transfers) a carrier leg that is still up, after its commit.
  calls.onFinalReport(telephony);
  // A call of a campaign that ends moves its contact in the call's own transaction.
  calls.onCallEnded(new CampaignOutcomes({ now: dialerNow, outbox }));
  const dialing = new OutboundDialing({
    db, calls, agents, phoneNumbers, integrations, billing, carrier: adapters.carrier, sip: adapters.sip,
    urls: { voice: config.carrier.voiceUrl, status: config.carrier.statusUrl }, log, audit,
  });
  const dialer = new CampaignDialer({
    database, queue, calls, agents, phoneNumbers, placer: options.placer ?? dialing, capacity: limits,
    balance: (within, orgId) => billing.balanceOf(within, orgId), outbox, log, now: dialerNow,
  });

  const services: Services = {
    config, database, log, queue, adapters,
    authenticator: new Authenticator({ keys: credentials.keys, users: new UserAccounts({ db }), tokens: adapters.tokens, calls: callTokens }),
    system: new SystemService({ database }),
    organizations,
    members: new MemberService({ db, apiKeys, outbox, audit }),
    invitations,
    apiKeys,
    agents,
    tools,
    integrations,
    runtime: new RuntimeService({ calls, agents, integrations, tools }),
    callTokens,
    phoneNumbers,
    knowledgeBase: new KnowledgeBaseService({ database, queue, store: adapters.store, embedder: adapters.embedder, agents, audit }),
    calls,
    dialing,
    previewSessions: new PreviewSessions({ db, calls, agents, billing, callTokens, audit, previewUrl: config.runtime.previewUrl }),
    telephony,
    recordings: new RecordingService({
      db, store: adapters.store, linkSecret: encryptionKey, publicBaseUrl: config.publicBaseUrl,
      tmpDir: path.join(config.dataDir, 'tmp'), maxBytes: config.recordingMaxBytes, audit, outbox,
    }),
    callExports,
    callAnalysis,
    billing,
    analytics,
    dataSettings,
    audit,
    limits,
    outbox,
    webhookDispatcher,
    events,
    webhooks: new WebhookService({ db, secrets: adapters.secrets, outbox, deliverer, agents, allowedNetworks: config.allowedNetworks, audit, now }),
    idempotency,
    campaigns,
    dialer,
    sessions,
    metrics,
    jobs: [],
    async close() {
      await webhookDispatcher.stop();
      await credentials.revocations.stop();
      adapters.redis?.disconnect();
      if (ownQueue) await queue.stop();
    },
  };
  services.jobs = PLATFORM_MODULES.flatMap((m) => m.workers?.(services) ?? []);
  return services;
}
