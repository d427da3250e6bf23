import { randomBytes } from 'node:crypto';
import path from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import helmet from '@fastify/helmet';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config } from './config.ts';
import type { Database } from './db/database.ts';
import { Authenticator } from './core/auth/authenticator.ts';
import { registerAuth } from './core/auth/plugin.ts';
import { TokenVerifier } from './core/auth/tokens.ts';
import { registerErrorHandling } from './core/error-handler.ts';
import { ErrorBody } from './core/schemas.ts';
import { agentRoutes } from './modules/agents/routes.ts';
import { AgentService } from './modules/agents/service.ts';
import { apiKeyRoutes } from './modules/api-keys/routes.ts';
import { ApiKeyService } from './modules/api-keys/service.ts';
import { organizationRoutes } from './modules/organizations/routes.ts';
import { OrganizationService } from './modules/organizations/service.ts';
import { MemberService } from './modules/organizations/members.ts';
import { invitationRoutes } from './modules/invitations/routes.ts';
import { InvitationService } from './modules/invitations/service.ts';
import { systemRoutes } from './modules/system/routes.ts';
import { toolRoutes } from './modules/tools/routes.ts';
import { ToolService } from './modules/tools/service.ts';
import { parseAllowList } from './adapters/http/safe-request.ts';
import { CarrierClient } from './adapters/carrier/carrier-client.ts';
import { SecretBox } from './core/secret-box.ts';
import { integrationRoutes } from './modules/integrations/routes.ts';
import { IntegrationService } from './modules/integrations/service.ts';
import { phoneNumberRoutes } from './modules/phone-numbers/routes.ts';
import { PhoneNumberService } from './modules/phone-numbers/service.ts';
import { LocalSipTrunks } from './adapters/sip/sip-trunks.ts';
import { LiveKitSipTrunks } from './adapters/sip/livekit-sip-trunks.ts';
import { createEmbedder, createObjectStore } from './adapters/factories.ts';
import type { Embedder } from './adapters/embedding/embedder.ts';
import type { ObjectStore } from './adapters/storage/object-store.ts';
import { JobQueue } from './jobs/queue.ts';
import { knowledgeBaseRoutes } from './modules/knowledge-base/routes.ts';
import { KnowledgeBaseService } from './modules/knowledge-base/service.ts';
import { callRoutes } from './modules/calls/routes.ts';
import { CallService } from './modules/calls/service.ts';
import { recordingRoutes } from './modules/calls/recording-routes.ts';
import { RecordingService } from './modules/calls/recordings.ts';
import { analyticsRoutes } from './modules/analytics/routes.ts';
import { billingRoutes } from './modules/billing/routes.ts';
import { BillingService } from './modules/billing/service.ts';
import { LocalPayments } from './adapters/payments/local-payments.ts';
import { StripePayments } from './adapters/payments/stripe-payments.ts';
import { AnalyticsService } from './modules/analytics/service.ts';

export interface AppDeps {
  config: Config;
  database: Database;
  /** HS256 secret of the embedded identity provider (undefined when a JWKS is configured). */
  jwtSecret: string | undefined;
  /** 32-byte key encrypting stored credentials (see `resolveEncryptionKey`). */
  encryptionKey: Buffer;
  /** Pino options, or false for silence (tests). */
  logger?: boolean | Record<string, unknown>;
  /** The job queue and adapters, when the caller shares them with workers; made from config otherwise. */
  queue?: JobQueue;
  store?: ObjectStore;
  embedder?: Embedder;
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

const SECURITY: Array<Record<string, string[]>> = [{ ApiKeyAuth: [] }, { BearerAuth: [] }];

/**
 * `Content-Type: application/json` with no body is a request without a body (the specification's
 * validate call sends exactly that; so do clients that set the header on every request).
 * Non-empty bodies go through Fastify's own parser, with its prototype-poisoning protection.
 */
function acceptEmptyJsonBodies(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    const text = body as string; // parseAs: 'string'
    if (text.trim() === '') return done(null, undefined);
    parseJson(req, text, done);
  });
}

/** The whole HTTP application. The server process and the tests build it the same way. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    logger: deps.logger ?? { level: deps.config.logLevel },
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : `req_${randomBytes(8).toString('hex')}`;
    },
    ajv: {
      // Unknown body fields are refused (400), not silently dropped; every failing field is reported.
      customOptions: { removeAdditional: false, allErrors: true, coerceTypes: 'array', useDefaults: true },
    },
    forceCloseConnections: 'idle',
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.addSchema(ErrorBody);
  registerErrorHandling(app);
  acceptEmptyJsonBodies(app);
  await app.register(helmet, { global: true });
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Switchboard',
        version: '0.1.0',
        description:
          'Control plane of a voice-agent platform. Every organization-scoped request carries X-Organization-Id and a credential: X-API-Key or Authorization: Bearer <JWT>. Errors are {detail, code, errors?}.',
      },
      components: {
        securitySchemes: {
          ApiKeyAuth: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
          BearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        },
      },
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });

  // Every route that needs a credential says so in the OpenAPI document.
  app.addHook('onRoute', (route) => {
    if (route.config?.auth === 'public') return;
    route.schema = { ...route.schema, security: SECURITY };
  });
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  // Graceful shutdown: responses still in flight close their keep-alive connection, so the server
  // does not wait out the keep-alive timeout of clients that would otherwise hold it open.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onSend', async (_request, reply) => {
    if (closing) reply.header('connection', 'close');
  });

  const { database, config } = deps;
  const tokens = new TokenVerifier(config.jwt, deps.jwtSecret);
  registerAuth(app, new Authenticator({ database, db: database.db, tokens }));

  await app.register(systemRoutes(database.pool));
  await app.register(organizationRoutes(new OrganizationService(database.db), new MemberService(database.db)));
  const queue = deps.queue ?? new JobQueue(database.connection, config.jobs);
  if (!deps.queue) app.addHook('onClose', () => queue.stop());
  await app.register(invitationRoutes(new InvitationService({ database, queue })));
  await app.register(apiKeyRoutes(new ApiKeyService(database.db)));
  await app.register(agentRoutes(new AgentService(database.db)));
  const secrets = new SecretBox(deps.encryptionKey);
  const carrier = new CarrierClient(config.carrier);
  const integrations = new IntegrationService({ db: database.db, secrets, carrier });
  await app.register(integrationRoutes(integrations));
  const sip = config.sip.backend === 'livekit' ? new LiveKitSipTrunks(config.sip) : new LocalSipTrunks(database.db);
  await app.register(phoneNumberRoutes(new PhoneNumberService({ db: database.db, secrets, carrier, voiceUrl: config.carrier.voiceUrl, sip, integrations })));
  const store = deps.store ?? createObjectStore(config);
  const knowledgeBase = new KnowledgeBaseService({ database, queue, store, embedder: deps.embedder ?? createEmbedder(config) });
  await app.register(knowledgeBaseRoutes(knowledgeBase, config.dataDir));
  await app.register(callRoutes(new CallService(database.db, database)));
  await app.register(recordingRoutes(new RecordingService({
    db: database.db, store, linkSecret: deps.encryptionKey, publicBaseUrl: config.publicBaseUrl,
    tmpDir: path.join(config.dataDir, 'tmp'), maxBytes: config.recordingMaxBytes,
  })));
  const payments = config.payments.stripe
    ? new StripePayments({ ...config.payments.stripe, successUrl: config.payments.successUrl, cancelUrl: config.payments.cancelUrl })
    : new LocalPayments(config.publicBaseUrl, deps.encryptionKey);
  await app.register(billingRoutes(new BillingService({ db: database.db, provider: payments, creditsPerDollar: config.creditsPerDollar, log: app.log }), config.payments));
  await app.register(analyticsRoutes(new AnalyticsService(database)));
  await app.register(toolRoutes(new ToolService(database.db, parseAllowList(config.toolAllowedNetworks))));

  await app.ready();
  return app;
}
