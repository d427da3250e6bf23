import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ORG_ROUTE_ERRORS, envelope, errorResponses, listEnvelope, MessageEnvelope, OrganizationHeader, pageBody } from '../../core/schemas.ts';
import { Agent, AgentIdParams, AgentSummary, CreateAgentBody, ListAgentsQuery, UpdateAgentBody } from './schemas.ts';
import type { AgentService } from './service.ts';

const tags = ['Agents'];

export function agentRoutes(service: AgentService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post('/api/agents', {
      config: { permission: 'agents:create' },
      schema: { operationId: 'createAgent',
        tags, summary: 'Create an agent', headers: OrganizationHeader, body: CreateAgentBody,
        response: { 200: envelope(Agent), ...errorResponses(...ORG_ROUTE_ERRORS, 404) },
      },
    }, async (req) => ({ success: true, message: 'Agent created', data: await service.create(req.ctx, req.body) }));

    app.get('/api/agents', {
      config: { permission: 'agents:read' },
      schema: { operationId: 'listAgents',
        tags, summary: 'List agents, newest first', headers: OrganizationHeader, querystring: ListAgentsQuery,
        response: { 200: listEnvelope(AgentSummary), ...errorResponses(...ORG_ROUTE_ERRORS) },
      },
    }, async (req) => pageBody(await service.list(req.ctx, req.query)));

    app.get('/api/agents/:agent_id', {
      config: { permission: 'agents:read' },
      schema: { operationId: 'getAgent',
        tags, summary: 'Get the full agent', headers: OrganizationHeader, params: AgentIdParams,
        response: { 200: envelope(Agent), ...errorResponses(...ORG_ROUTE_ERRORS, 404) },
      },
    }, async (req) => ({ success: true, data: await service.get(req.ctx, req.params.agent_id) }));

    app.patch('/api/agents/:agent_id', {
      config: { permission: 'agents:update' },
      schema: { operationId: 'updateAgent',
        tags, summary: 'Update an agent (only the fields given; tool_ids replaces the set)',
        headers: OrganizationHeader, params: AgentIdParams, body: UpdateAgentBody,
        response: { 200: envelope(Agent), ...errorResponses(...ORG_ROUTE_ERRORS, 404) },
      },
    }, async (req) => ({ success: true, message: 'Agent updated', data: await service.update(req.ctx, req.params.agent_id, req.body) }));

    app.delete('/api/agents/:agent_id', {
      config: { permission: 'agents:delete' },
      schema: { operationId: 'deleteAgent',
        tags, summary: 'Delete an agent (refused with 409 while phone numbers are assigned to it)',
        headers: OrganizationHeader, params: AgentIdParams,
        response: { 200: MessageEnvelope, ...errorResponses(...ORG_ROUTE_ERRORS, 404, 409) },
      },
    }, async (req) => {
      await service.delete(req.ctx, req.params.agent_id);
      return { success: true, message: 'Agent deleted' };
    });
  };
}
