import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ORG_ROUTE_ERRORS, envelope, errorResponses, OrganizationHeader } from '../../core/schemas.ts';
import { RuntimeCall, RuntimeCallParams, RuntimeToolBody, RuntimeToolParams, RuntimeToolResult } from './schemas.ts';
import type { RuntimeService } from './service.ts';

const tags = ['Voice runtime'];
const CALL_TOKEN = 'With the call token of this call only (`Authorization: Bearer <token>` from the stream\'s `<Parameter name="token">`); no API key or user role may call it.';

export function runtimeRoutes(service: RuntimeService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get('/api/runtime/calls/:call_sid', {
      config: { permission: 'runtime:call', callToken: true },
      schema: { operationId: 'getRuntimeCall',
        tags, headers: OrganizationHeader, params: RuntimeCallParams,
        summary: 'What a voice runtime needs for a call: the call, the full agent, variables, decrypted provider credentials and the tools as functions',
        description: CALL_TOKEN,
        response: { 200: envelope(RuntimeCall), ...errorResponses(...ORG_ROUTE_ERRORS, 404) },
      },
    }, async (req) => ({ success: true, data: await service.callConfiguration(req.ctx, req.params.call_sid) }));

    app.post('/api/runtime/calls/:call_sid/tools/:tool_name', {
      config: { permission: 'runtime:call', callToken: true },
      schema: { operationId: 'callRuntimeTool',
        tags, headers: OrganizationHeader, params: RuntimeToolParams, body: RuntimeToolBody,
        summary: "Calls one of the call's agent's webhook tools (its method, headers and timeout, under the outbound address rule)",
        description: CALL_TOKEN,
        response: { 200: envelope(RuntimeToolResult), ...errorResponses(...ORG_ROUTE_ERRORS, 404) },
      },
    }, async (req) => ({ success: true, data: await service.callTool(req.ctx, req.params.call_sid, req.params.tool_name, req.body.arguments ?? {}) }));
  };
}
