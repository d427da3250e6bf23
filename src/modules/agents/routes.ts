import { Errors } from '../../core/errors.ts';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ORG_ROUTE_ERRORS, envelope, errorResponses, listEnvelope, MessageEnvelope, OrganizationHeader, pageBody } from '../../core/schemas.ts';
import { Agent, AgentIdParams, AgentSummary, AgentVersion, AgentVersionDiff, AgentVersionDiffQuery, AgentVersionParams, CreateAgentBody, ListAgentsQuery, UpdateAgentBody } from './schemas.ts';
import type { AgentService } from './service.ts';

const tags = ['Agents'];

/** A version in a path; anything but a version number names no version (404, like a malformed id). */
function versionNumber(text: string): number {
  if (!/^[1-9][0-9]{0,6}$/.test(text)) throw Errors.notFound(`Agent version ${text.slice(0, 20)}`);
  return Number(text);
}

export function agentRoutes(service: AgentService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post('/api/agents', {
      config: { permission: 'agents:create', idempotency: 'in-transaction' },
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
      config: { permission: 'agents:update', idempotency: 'in-transaction' },
      schema: { operationId: 'updateAgent',
        tags, summary: 'Update an agent (only the fields given; tool_ids replaces the set)',
        headers: OrganizationHeader, params: AgentIdParams, body: UpdateAgentBody,
        response: { 200: envelope(Agent), ...errorResponses(...ORG_ROUTE_ERRORS, 404) },
      },
    }, async (req) => ({ success: true, message: 'Agent updated', data: await service.update(req.ctx, req.params.agent_id, req.body) }));

    app.get('/api/agents/:agent_id/versions', {
      config: { permission: 'agents:read' },
      schema: { operationId: 'listAgentVersions',
        tags, summary: "List the agent's versions, newest first", headers: OrganizationHeader, params: AgentIdParams, querystring: ListAgentsQuery,
        response: { 200: listEnvelope(AgentVersion), ...errorResponses(...ORG_ROUTE_ERRORS, 404) },
      },
    }, async (req) => pageBody(await service.listVersions(req.ctx, req.params.agent_id, req.query)));

    app.get('/api/agents/:agent_id/versions/:version', {
      config: { permission: 'agents:read' },
      schema: { operationId: 'getAgentVersion',
        tags, summary: 'Get one version of the agent', headers: OrganizationHeader, params: AgentVersionParams,
        response: { 200: envelope(AgentVersion), ...errorResponses(...ORG_ROUTE_ERRORS, 404) },
      },
    }, async (req) => ({ success: true, data: await service.getVersion(req.ctx, req.params.agent_id, versionNumber(req.params.version)) }));

    app.get('/api/agents/:agent_id/versions/:version/diff', {
      config: { permission: 'agents:read' },
      schema: { operationId: 'diffAgentVersions',
        tags, summary: 'What changed from version `against` to this version', headers: OrganizationHeader, params: AgentVersionParams, querystring: AgentVersionDiffQuery,
        response: { 200: envelope(AgentVersionDiff), ...errorResponses(...ORG_ROUTE_ERRORS, 404) },
      },
    }, async (req) => ({ success: true, data: await service.diffVersions(req.ctx, req.params.agent_id, versionNumber(req.params.version), req.query.against) }));

    app.post('/api/agents/:agent_id/versions/:version/restore', {
      config: { permission: 'agents:update', idempotency: 'in-transaction' },
      schema: { operationId: 'restoreAgentVersion',
        tags, summary: 'Make a new version equal to this one and clear the traffic split (409 version_not_restorable when it links to what was deleted since)',
        headers: OrganizationHeader, params: AgentVersionParams,
        response: { 200: envelope(Agent), ...errorResponses(...ORG_ROUTE_ERRORS, 404, 409) },
      },
    }, async (req) => ({ success: true, message: 'Agent version restored', data: await service.restore(req.ctx, req.params.agent_id, versionNumber(req.params.version)) }));

    app.delete('/api/agents/:agent_id', {
      config: { permission: 'agents:delete', idempotency: 'in-transaction' },
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
