import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ORG_ROUTE_ERRORS, errorResponses, listEnvelope, OrganizationHeader, pageBody } from '../../core/schemas.ts';
import { AuditEntry, ListAuditLogsQuery } from './schemas.ts';
import type { AuditService } from './service.ts';

export function auditRoutes(service: AuditService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get('/api/audit-logs', {
      config: { permission: 'audit_logs:read' },
      schema: { operationId: 'listAuditLogs',
        tags: ['Audit log'], headers: OrganizationHeader, querystring: ListAuditLogsQuery,
        summary: 'Who changed what, newest first (admin): filters actor_id, action, resource_type, resource_id, from, to; entries are kept 365 days',
        response: { 200: listEnvelope(AuditEntry), ...errorResponses(...ORG_ROUTE_ERRORS) },
      },
    }, async (req) => pageBody(await service.list(req.ctx, req.query)));
  };
}
