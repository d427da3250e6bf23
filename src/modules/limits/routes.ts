import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ORG_ROUTE_ERRORS, envelope, errorResponses, OrganizationHeader } from '../../core/schemas.ts';
import { Limits } from './schemas.ts';
import type { LimitsService } from './service.ts';

export function limitsRoutes(service: LimitsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get('/api/limits', {
      config: { permission: 'limits:read' },
      schema: { operationId: 'getLimits',
        tags: ['Limits'], headers: OrganizationHeader,
        summary: "The organization's limits: concurrent calls (the limit and the calls active now) and requests a minute per credential",
        response: { 200: envelope(Limits), ...errorResponses(...ORG_ROUTE_ERRORS) },
      },
    }, async (req) => ({ success: true, data: await service.get(req.ctx) }));
  };
}
