import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ORG_ROUTE_ERRORS, envelope, errorResponses, listEnvelope, MessageEnvelope, OrganizationHeader, pageBody } from '../../core/schemas.ts';
import { CreateToolBody, ListToolsQuery, TestToolBody, Tool, ToolIdParams, ToolTestResult, UpdateToolBody } from './schemas.ts';
import type { ToolService } from './service.ts';

const tags = ['Tools'];

export function toolRoutes(service: ToolService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post('/api/tools', {
      config: { permission: 'tools:create', idempotency: 'in-transaction' },
      schema: { operationId: 'createTool',
        tags, summary: 'Create a webhook tool', headers: OrganizationHeader, body: CreateToolBody,
        response: { 200: envelope(Tool), ...errorResponses(...ORG_ROUTE_ERRORS, 409) },
      },
    }, async (req) => ({ success: true, message: 'Tool created', data: await service.create(req.ctx, req.body) }));

    app.get('/api/tools', {
      config: { permission: 'tools:read' },
      schema: { operationId: 'listTools',
        tags, summary: 'List tools, newest first', headers: OrganizationHeader, querystring: ListToolsQuery,
        response: { 200: listEnvelope(Tool), ...errorResponses(...ORG_ROUTE_ERRORS) },
      },
    }, async (req) => pageBody(await service.list(req.ctx, req.query)));

    app.get('/api/tools/:tool_id', {
      config: { permission: 'tools:read' },
      schema: { operationId: 'getTool',
        tags, summary: 'Get a tool', headers: OrganizationHeader, params: ToolIdParams,
        response: { 200: envelope(Tool), ...errorResponses(...ORG_ROUTE_ERRORS, 404) },
      },
    }, async (req) => ({ success: true, data: await service.get(req.ctx, req.params.tool_id) }));

    app.patch('/api/tools/:tool_id', {
      config: { permission: 'tools:update', idempotency: 'in-transaction' },
      schema: { operationId: 'updateTool',
        tags, summary: "Update a tool: only the fields given change; headers and parameters are replaced whole. Another organization's tool: 403",
        headers: OrganizationHeader, params: ToolIdParams, body: UpdateToolBody,
        response: { 200: envelope(Tool), ...errorResponses(...ORG_ROUTE_ERRORS, 404, 409) },
      },
    }, async (req) => ({ success: true, message: 'Tool updated', data: await service.update(req.ctx, req.params.tool_id, req.body) }));

    app.delete('/api/tools/:tool_id', {
      config: { permission: 'tools:delete', idempotency: 'in-transaction' },
      schema: { operationId: 'deleteTool',
        tags, summary: 'Delete a tool (agents stop offering it)', headers: OrganizationHeader, params: ToolIdParams,
        response: { 200: MessageEnvelope, ...errorResponses(...ORG_ROUTE_ERRORS, 404) },
      },
    }, async (req) => {
      await service.delete(req.ctx, req.params.tool_id);
      return { success: true, message: 'Tool deleted' };
    });

    app.post('/api/tools/:tool_id/test', {
      config: { permission: 'tools:update' },
      // The body is optional: no body means sample arguments.
      preValidation: async (req) => {
        req.body ??= {};
      },
      schema: { operationId: 'testTool',
        tags, summary: 'Call the webhook once with sample (or given) arguments; private and loopback destinations are refused (400)',
        headers: OrganizationHeader, params: ToolIdParams, body: TestToolBody,
        response: { 200: envelope(ToolTestResult), ...errorResponses(...ORG_ROUTE_ERRORS, 404) },
      },
    }, async (req) => ({ success: true, data: await service.test(req.ctx, req.params.tool_id, req.body?.arguments) }));
  };
}
