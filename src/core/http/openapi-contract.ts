/**
 * What every operation of the OpenAPI document says about the answers the framework layers give,
 * whatever the route: the statuses they can answer (rate limit, body limits, media types, path
 * limits, idempotency conflicts) and the headers they send. Written once here, from each route's
 * configuration, rather than by hand in 100 routes, so a generated client or a validating proxy
 * knows every answer it can get. Documentation only: nothing here changes what a route validates.
 */
import type { RouteOptions } from 'fastify';

type Schema = Record<string, unknown>;

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Request bodies as the document types them, by media type, where the route validates none
     * (multipart forms and raw uploads are read while they stream): clients generated from the
     * document then send a FormData or a binary body.
     */
    documentedBody?: Record<string, Schema>;
  }
}

/** Methods whose requests may carry a body: the body limit (413) and the parsers (415) apply. */
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

const error = (description: string): Schema => ({ $ref: 'Error', description });

interface RouteSchema {
  headers?: { properties?: Record<string, unknown>; required?: string[] };
  params?: unknown;
  querystring?: unknown;
  body?: { content?: Record<string, { schema?: unknown }> };
  response?: Record<string, Schema>;
}

/** The statuses the layers in front of a route can answer, with the Error body. */
function commonResponses(route: RouteOptions, schema: RouteSchema): Record<string, Schema> {
  const methods = (Array.isArray(route.method) ? route.method : [route.method]).map(String);
  const auth = route.config?.auth ?? 'org';
  const out: Record<string, Schema> = {};
  if (schema.params || schema.querystring || schema.body || schema.headers || methods.some((m) => BODY_METHODS.has(m))) {
    out[400] = error(auth === 'org' ? 'Invalid request (validation, cursor, missing X-Organization-Id)' : 'Invalid request');
  }
  if (auth !== 'public') {
    out[401] = error('Missing or invalid credential');
    out[403] = error(auth === 'org' ? 'Not allowed (role, scope, organization, address)' : 'Not allowed (address)');
  }
  if (schema.headers?.properties?.['idempotency-key']) {
    out[409] = error('Conflict: `idempotency_key_reused` (the key was used with another request) or `idempotency_key_in_use` (its first request still runs)');
  }
  if (methods.some((m) => BODY_METHODS.has(m))) {
    out[413] = error('Payload too large');
    out[415] = error('Unsupported media type');
  }
  // Fastify's router refuses a path parameter over its length limit before any route runs.
  if (route.url.includes(':')) out[414] = error('A path parameter is too long');
  out[429] = error('Rate limited (`rate_limited`, or `concurrency_limit` where calls are started); Retry-After says when to retry');
  out[500] = error('Internal server error');
  return out;
}

/** A 409 the route documents for its own conflicts also names the idempotency conflicts. */
function mergeConflict(own: Schema): Schema {
  const description = String(own.description ?? 'Conflict with the current state');
  return { ...own, description: `${description}; or \`idempotency_key_reused\` / \`idempotency_key_in_use\` (Idempotency-Key)` };
}

/**
 * @fastify/swagger's per-route transform: the route's schema as the document shows it. The route's own
 * schema object is never changed (it is the one Fastify validates and serializes with).
 */
export function documentRoute({ schema, url, route }: { schema: unknown; url: string; route: RouteOptions }): { schema: unknown; url: string } {
  if (!schema || (schema as { hide?: boolean }).hide) return { schema, url };
  const own = schema as RouteSchema;
  const documented: RouteSchema & Schema = { ...own };
  if ((route.config?.auth ?? 'org') === 'org' && own.headers?.properties?.['x-organization-id']) {
    documented.headers = { ...own.headers, required: [...new Set([...(own.headers.required ?? []), 'x-organization-id'])] };
  }
  const bodies = route.config?.documentedBody;
  if (bodies && own.body?.content) {
    const content = Object.fromEntries(Object.entries(own.body.content).map(([type, media]) => [type, bodies[type] ? { ...media, schema: bodies[type] } : media]));
    documented.body = { ...own.body, content };
  }
  const response: Record<string, Schema> = { ...(own.response ?? {}) };
  for (const [status, entry] of Object.entries(commonResponses(route, own))) {
    const given = response[status];
    response[status] = !given ? entry : status === '409' && own.headers?.properties?.['idempotency-key'] ? mergeConflict(given) : given;
  }
  documented.response = response;
  return { schema: documented, url };
}

const header = (description: string, schema: Schema, required: boolean) => ({ description, required, schema });

/** Headers reused by every response, referred to from `components.headers`. */
const HEADERS = {
  RateLimitLimit: header('Requests allowed per minute to this caller (its API key or user; its address when anonymous)', { type: 'integer' }, true),
  RateLimitRemaining: header('Requests left in the current minute', { type: 'integer' }, true),
  RateLimitReset: header('Seconds until the current minute ends', { type: 'integer' }, true),
  RequestId: header('The id of this request (the caller\'s X-Request-Id when given and well formed), in the logs and the error logs', { type: 'string' }, true),
  RetryAfter: header('Seconds to wait before retrying', { type: 'integer' }, true),
  IdempotentReplayed: header('`true` when this is the kept response of an earlier request with the same Idempotency-Key (nothing ran again)', { type: 'string', enum: ['true'] }, false),
};

const ref = (name: keyof typeof HEADERS) => ({ $ref: `#/components/headers/${name}` });

interface Operation {
  parameters?: Array<{ in?: string; name?: string }>;
  responses?: Record<string, { headers?: Record<string, Schema> }>;
}

/**
 * The document's transform: every response declares the headers every answer carries. An answer the
 * router refuses before any hook runs (400 `invalid_url`) has no rate-limit count, so a 400 declares
 * RateLimit-* without requiring them. A header a route declares on its own response (the recording's
 * Content-Disposition) is one it always sends, so it is required.
 */
export function declareResponseHeaders<D extends { paths?: Record<string, Record<string, Operation>>; components?: Record<string, unknown> }>(document: D): D {
  for (const operations of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(operations)) {
      const idempotent = (operation.parameters ?? []).some((p) => p.in === 'header' && p.name?.toLowerCase() === 'idempotency-key');
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        const own = Object.fromEntries(Object.entries(response.headers ?? {}).map(([name, h]) => [name, { ...h, required: true }]));
        const rateLimit = status === '400'
          ? { 'RateLimit-Limit': { ...HEADERS.RateLimitLimit, required: false }, 'RateLimit-Remaining': { ...HEADERS.RateLimitRemaining, required: false }, 'RateLimit-Reset': { ...HEADERS.RateLimitReset, required: false } }
          : { 'RateLimit-Limit': ref('RateLimitLimit'), 'RateLimit-Remaining': ref('RateLimitRemaining'), 'RateLimit-Reset': ref('RateLimitReset') };
        response.headers = {
          'X-Request-Id': ref('RequestId'),
          ...rateLimit,
          ...(status === '429' ? { 'Retry-After': ref('RetryAfter') } : {}),
          ...(idempotent && Number(status) < 500 ? { 'Idempotent-Replayed': ref('IdempotentReplayed') } : {}),
          ...own,
        };
      }
    }
  }
  return { ...document, components: { ...document.components, headers: { ...(document.components?.headers as object | undefined), ...HEADERS } } };
}
