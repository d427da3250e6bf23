import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Principal, RequestContext } from '../context.ts';
import { Errors } from '../errors.ts';
import { isInNetworks, parseNetworks } from '../networks.ts';
import { hasPermission } from '../permissions.ts';
import type { Authenticator } from './authenticator.ts';

/**
 * How a route is reached:
 * - `org` (the default): a credential and `X-Organization-Id`; `req.ctx` is set.
 * - `principal`: a credential only (e.g. `GET /api/auth/me`); `req.principal` is set.
 * - `public`: no credential (health, docs, signed links).
 */
export type RouteAuth = 'org' | 'principal' | 'public';

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: RouteAuth;
    /** Permission of `core/permissions.ts` the caller's role must hold (org routes). */
    permission?: string;
    /**
     * The route accepts a call token (extensions.md §10), for the token's own call: a `call_sid`
     * path parameter must be the token's. Every other route refuses call tokens (403 scope_missing).
     */
    callToken?: boolean;
  }
  interface FastifyRequest {
    ctx: RequestContext;
    principal: Principal;
  }
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Counts a request against its rate limit (src/core/http/rate-limit.ts): by its credential once it is
 * known, by its client address otherwise. Throws 429 when over.
 */
export type RequestLimiter = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

/**
 * Authenticates in `onRequest`, so a caller without access never reaches body parsing or validation.
 * The rate limit is counted between identifying the caller and refusing it, so a flood of bad
 * credentials is limited by its address like any anonymous traffic.
 */
export function registerAuth(app: FastifyInstance, authenticator: Authenticator, limit: RequestLimiter = async () => {}): void {
  app.decorateRequest('ctx', null as unknown as RequestContext);
  app.decorateRequest('principal', null as unknown as Principal);

  app.addHook('onRequest', async (request, reply) => {
    let refusal: unknown;
    try {
      await authenticate(request, authenticator);
    } catch (err) {
      refusal = err;
    }
    await limit(request, reply);
    if (refusal) throw refusal;
  });
}

async function authenticate(request: FastifyRequest, authenticator: Authenticator): Promise<void> {
  const config = request.routeOptions.config;
  const auth: RouteAuth = config?.auth ?? 'org';
  if (auth === 'public' || request.is404) return;
  const principal = await authenticator.principal(
    { apiKey: header(request, 'x-api-key'), authorization: header(request, 'authorization') },
    request.id,
  );
  request.principal = { ...principal, ip: request.ip, userAgent: header(request, 'user-agent') };
  // The address is the socket's, or X-Forwarded-For's when TRUST_PROXY names the proxy (Fastify's request.ip).
  const allowedIps = principal.apiKey?.allowedIps ?? [];
  if (allowedIps.length && !isInNetworks(request.ip, parseNetworks(allowedIps.join(',')))) throw Errors.ipNotAllowed();
  // A call token is for its call's routes (below), never for a caller's own account routes.
  if (auth === 'principal') {
    if (principal.call) throw Errors.scopeMissing('this route');
    return;
  }
  const ctx = await authenticator.context(principal, header(request, 'x-organization-id'));
  if (ctx.call) {
    const callSid = (request.params as { call_sid?: string } | undefined)?.call_sid;
    if (!config.callToken || (callSid !== undefined && callSid !== ctx.call.callSid)) throw Errors.scopeMissing(config.permission ?? 'this route');
    request.ctx = { ...ctx, ip: request.ip, userAgent: header(request, 'user-agent') };
    return;
  }
  if (config.permission && !hasPermission(ctx.role, config.permission)) {
    throw Errors.permissionDenied(config.permission, ctx.role);
  }
  // A narrowed key needs the scope as well as the role.
  const scopes = principal.apiKey?.scopes ?? [];
  if (config.permission && scopes.length && !scopes.includes(config.permission)) throw Errors.scopeMissing(config.permission);
  request.ctx = { ...ctx, ip: request.ip, userAgent: header(request, 'user-agent') };
}
