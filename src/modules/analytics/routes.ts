import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ORG_ROUTE_ERRORS, envelope, errorResponses, OrganizationHeader } from '../../core/schemas.ts';
import { DailyMetrics, DailyQuery } from './schemas.ts';
import type { AnalyticsService } from './service.ts';
import { UsageQuery, UsageReport } from './usage-schemas.ts';

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

    app.get('/api/analytics/usage', {
      config: { permission: 'analytics:read' },
      schema: { operationId: 'getUsageAnalytics',
        tags: ['Analytics'], headers: OrganizationHeader, querystring: UsageQuery,
        summary: 'Ended calls, durations and costs per bucket (minute, hour, day, week, month in timezone) and per group (agent, phone_number, status, end_reason, call_type, campaign, metadata.<key>); every bucket present, zero-filled; totals are the sums of the groups',
        response: { 200: envelope(UsageReport), ...errorResponses(...ORG_ROUTE_ERRORS) },
      },
    }, async (req) => ({ success: true, data: await service.usage(req.ctx, req.query) }));
  };
}
