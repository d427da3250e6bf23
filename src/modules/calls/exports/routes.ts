import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ORG_ROUTE_ERRORS, envelope, errorResponses, OrganizationHeader } from '../../../core/schemas.ts';
import { CallExport, CreateCallExportBody, ExportIdParams, SignedExportQuery } from './schemas.ts';
import type { CallExportService } from './service.ts';

const tags = ['Calls'];

const file = (description: string) => ({
  description,
  content: { 'text/csv': { schema: { type: 'string' } }, 'application/x-ndjson': { schema: { type: 'string' } } },
});

/** Exports of calls (extensions.md §4): `calls:export`, every role that reads calls. */
export function callExportRoutes(service: CallExportService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post('/api/calls/exports', {
      config: { permission: 'calls:export' },
      schema: { operationId: 'createCallExport',
        tags, headers: OrganizationHeader, body: CreateCallExportBody,
        summary: 'Export the calls the list returns for these filters as CSV or JSONL: a worker writes the file; poll the export for its download_url',
        response: { 200: envelope(CallExport), ...errorResponses(...ORG_ROUTE_ERRORS) },
      },
    }, async (req) => ({ success: true, message: 'Export started', data: await service.create(req.ctx, req.body) }));

    app.get('/api/calls/exports/:export_id', {
      config: { permission: 'calls:export' },
      schema: { operationId: 'getCallExport',
        tags, headers: OrganizationHeader, params: ExportIdParams,
        summary: 'An export: status, row_count, bytes and, once completed, a download_url signed for 1 hour; exports are kept 7 days',
        response: { 200: envelope(CallExport), ...errorResponses(...ORG_ROUTE_ERRORS, 404) },
      },
    }, async (req) => ({ success: true, data: await service.get(req.ctx, req.params.export_id) }));

    app.get('/api/exports/:export_id', {
      config: { auth: 'public' },
      schema: { operationId: 'downloadCallExport',
        tags, params: ExportIdParams, querystring: SignedExportQuery,
        summary: "An export's signed download link (local object store): no credential; a bad or expired signature 403",
        response: { 200: file('The export file'), ...errorResponses(400, 403, 404, 500) },
      },
    }, async (req, reply) => {
      const download = await service.openSigned({ orgId: req.query.org, exportId: req.params.export_id, expires: req.query.expires }, req.query.sig);
      return reply
        .header('content-type', download.contentType)
        .header('content-length', String(download.size))
        .header('content-disposition', `attachment; filename="${download.filename}"`)
        .header('cache-control', 'private, no-store')
        .send(download.body);
    });
  };
}
