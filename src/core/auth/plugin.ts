import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Principal, RequestContext } from '../context.ts';
import { Errors } from '../errors.ts';
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

/** Authenticates in `onRequest`, so a caller without access never reaches body parsing or validation. */
export function registerAuth(app: FastifyInstance, authenticator: Authenticator): void {
  app.decorateRequest('ctx', null as unknown as RequestContext);
  app.decorateRequest('principal', null as unknown as Principal);

  app.addHook('onRequest', async (request) => {
    const config = request.routeOptions.config;
    const auth: RouteAuth = config?.auth ?? 'org';
    if (auth === 'public' || request.is404) return;
    const principal = await authenticator.principal(
      { apiKey: header(request, 'x-api-key'), authorization: header(request, 'authorization') },
      request.id,
    );
    request.principal = principal;
    if (auth === 'principal') return;
    const ctx = await authenticator.context(principal, header(request, 'x-organization-id'));
    if (config.permission && !hasPermission(ctx.role, config.permission)) {
      throw Errors.permissionDenied(config.permission, ctx.role);
    }
    request.ctx = ctx;
  });
}
