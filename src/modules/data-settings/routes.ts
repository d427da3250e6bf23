import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ORG_ROUTE_ERRORS, envelope, errorResponses, OrganizationHeader } from '../../core/schemas.ts';
import { DataSettings, UpdateDataSettingsBody } from './schemas.ts';
import type { DataSettingsService } from './service.ts';

const tags = ['Data settings'];

export function dataSettingsRoutes(service: DataSettingsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get('/api/settings/data', {
      config: { permission: 'data_settings:read' },
      schema: { operationId: 'getDataSettings',
        tags, headers: OrganizationHeader, summary: 'Retention of transcripts and recordings, and PII redaction (admin)',
        response: { 200: envelope(DataSettings), ...errorResponses(...ORG_ROUTE_ERRORS) },
      },
    }, async (req) => ({ success: true, data: await service.get(req.ctx) }));

    app.patch('/api/settings/data', {
      config: { permission: 'data_settings:update' },
      schema: { operationId: 'updateDataSettings',
        tags, headers: OrganizationHeader, body: UpdateDataSettingsBody,
        summary: 'Change the data policy (admin): retention days 1-3650 or null to keep; redact_pii applies to transcripts stored from now on',
        response: { 200: envelope(DataSettings), ...errorResponses(...ORG_ROUTE_ERRORS) },
      },
    }, async (req) => ({ success: true, message: 'Data settings updated', data: await service.update(req.ctx, req.body) }));
  };
}
