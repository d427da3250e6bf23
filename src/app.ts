import { randomBytes } from 'node:crypto';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { PLATFORM_MODULES, type Services } from './services.ts';
import { registerAuth } from './core/auth/plugin.ts';
import { registerErrorHandling } from './core/error-handler.ts';
import { registerRequestLog } from './core/http/request-log.ts';
import { previewSocketPolicy, registerSecurityHeaders } from './core/http/security-headers.ts';
import { clientErrorHandler, frameworkErrors } from './core/http/framework-errors.ts';
import { registerBodyWatchdog, serverTimeoutOptions } from './core/http/timeouts.ts';
import { createRequestLimiter } from './core/http/rate-limit.ts';
import { registerInputGuards } from './core/http/input-guards.ts';
import { requestValidatorFactory } from './core/http/request-validation.ts';
import { responseSerializerFactory } from './core/http/response-serialization.ts';
import { registerIdempotency } from './core/http/idempotency.ts';
import { registerHttpMetrics } from './core/http/metrics.ts';
import { registerCompression } from './core/http/compression.ts';
import { nameSchemas } from './core/http/openapi.ts';
import { declareResponseHeaders, documentRoute } from './core/http/openapi-contract.ts';
import { OPENAPI_INFO } from './core/http/openapi-info.ts';
import { ErrorBody } from './core/schemas.ts';
import { registerVoiceRuntime } from './voice-runtime.ts';

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * Request ids: a random prefix per process and a counter, unique across processes without drawing
 * random bytes for every request (which cost about 2% of a list request's CPU).
 */
const requestIds = (() => {
  const prefix = `req_${randomBytes(4).toString('hex')}`;
  let next = 0;
  return () => `${prefix}${(next++).toString(36).padStart(6, '0')}`;
})();

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

/**
 * The whole HTTP application over the services of the composition root (src/services.ts). The
 * server process and the tests build it the same way. Whoever built the services closes them after
 * the app, unless `closeServices` hands them to the app's close.
 */
export interface BuildAppOptions {
  /** The app's close closes the services too. */
  closeServices?: boolean;
  /** Runs before the routes are registered (the tests check every answer against the OpenAPI document). */
  instrument?: (app: FastifyInstance) => void;
  /** Compiles every route's validators and serializers while the app is built, not on first use (a test proves they all compile). */
  compileSchemasAtBuild?: boolean;
}

export async function buildApp(
  services: Services,
  options: BuildAppOptions = {},
): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: services.log as FastifyBaseLogger,
    // One line per request, on its answer (core/http/request-log.ts), instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : requestIds();
    },
    // Unknown body fields are refused (400), not silently dropped; JSON bodies are not coerced; at
    // most 20 failing fields are reported (src/core/http/request-validation.ts). Validators and
    // response serializers are compiled on their route's first use (response-serialization.ts).
    schemaController: { compilersFactory: {
      buildValidator: requestValidatorFactory({ eager: options.compileSchemasAtBuild }),
      buildSerializer: responseSerializerFactory({ eager: options.compileSchemasAtBuild }),
    } },
    forceCloseConnections: 'idle',
    // X-Forwarded-For is believed only from the proxies TRUST_PROXY names (request.ip).
    ...(services.config.trustProxy.length ? { trustProxy: services.config.trustProxy } : {}),
    ...serverTimeoutOptions(services.config.http),
    clientErrorHandler,
    frameworkErrors,
    // Long enough for any id (Fastify's default, 100, answered a 414 to ids that should simply be 404).
    routerOptions: { maxParamLength: 256 },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.addSchema(ErrorBody);
  registerRequestLog(app);
  registerErrorHandling(app);
  acceptEmptyJsonBodies(app);
  // No operation takes text: a body sent as text/plain is 415 like any other unsupported type
  // (Fastify's default text parser handed routes a string where they expect an object).
  app.removeContentTypeParser('text/plain');
  registerSecurityHeaders(app, previewSocketPolicy(services.config.publicBaseUrl, services.config.runtime.previewUrl));
  registerBodyWatchdog(app, services.config.http);
  registerInputGuards(app);
  await registerCompression(app);
  await app.register(swagger, {
    openapi: OPENAPI_INFO as never,
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
    transform: documentRoute as never,
    transformObject: (documents) => declareResponseHeaders(nameSchemas(('openapiObject' in documents ? documents.openapiObject : documents.swaggerObject) as Record<string, never>)),
  });

  // Every route that needs a credential says so in the OpenAPI document.
  app.addHook('onRoute', (route) => {
    // Every operation is described: its summary says it in a line, when no longer description is given.
    const schema = route.schema as { summary?: string; description?: string } | undefined;
    if (schema?.summary && !schema.description) route.schema = { ...route.schema, description: schema.summary };
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

  const { config } = services;
  registerHttpMetrics(app, services.metrics, config.metrics);
  registerAuth(app, services.authenticator, await createRequestLimiter(app, config.rateLimit, services.adapters.redis));
  registerIdempotency(app, services.idempotency);
  options.instrument?.(app);
  // Every module's routes, in the registry's order (the OpenAPI document lists paths in this order).
  for (const module of PLATFORM_MODULES) if (module.routes) await app.register(await module.routes(services));
  await registerVoiceRuntime(app, services);

  if (options.closeServices) app.addHook('onClose', () => services.close());
  await app.ready();
  return app;
}
