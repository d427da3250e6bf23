import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ORG_ROUTE_ERRORS, envelope, errorResponses, OrganizationHeader } from '../../core/schemas.ts';
import { DailyMetrics, DailyQuery } from './schemas.ts';
import type { AnalyticsService } from './service.ts';

export function analyticsRoutes(service: AnalyticsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get('/api/analytics/calls/daily', {
      config: { permission: 'analytics:read' },
      schema: { operationId: 'getDailyCallAnalytics',
        tags: ['Analytics'], headers: OrganizationHeader, querystring: DailyQuery,
        summary: 'Ended calls per calendar day in timezone (at most 366 days), or per minute when start_time is given (at most 24 hours); every point present, zero-filled',
        response: { 200: envelope(DailyMetrics), ...errorResponses(...ORG_ROUTE_ERRORS) },
      },
    }, async (req) => ({ success: true, data: await service.daily(req.ctx, req.query) }));
  };
}
