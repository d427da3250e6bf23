import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ORG_ROUTE_ERRORS, envelope, errorResponses, listEnvelope, OrganizationHeader, pageBody } from '../../core/schemas.ts';
import { Call, CallSidParams, CallSummary, CreateCallBody, ListCallsQuery, UpdateCallBody } from './schemas.ts';
import type { CallService } from './service.ts';

const tags = ['Calls'];

/** The runtime reports calls (calls:write); every role reads them. */
export function callRoutes(service: CallService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post('/api/calls', {
      config: { permission: 'calls:write' },
      schema: { operationId: 'createCall',
        tags, headers: OrganizationHeader, body: CreateCallBody,
        summary: 'Report a new call (voice runtime): agent_name and recording_enabled are copied from the agent; call_sid is made when not given',
        response: { 200: envelope(Call), ...errorResponses(...ORG_ROUTE_ERRORS, 404, 409) },
      },
    }, async (req) => ({ success: true, message: 'Call created', data: await service.create(req.ctx, req.body) }));

    app.get('/api/calls', {
      config: { permission: 'calls:read' },
      schema: { operationId: 'listCalls',
        tags, headers: OrganizationHeader, querystring: ListCallsQuery,
        summary: 'List call summaries, newest first (created_at desc, call_sid desc); filter by agent, status, type, creation time, end reason, billing status, number, duration, cost, recording, campaign, metadata.<key>, and q (transcript search, adding snippet)',
        response: { 200: listEnvelope(CallSummary), ...errorResponses(...ORG_ROUTE_ERRORS) },
      },
    }, async (req) => pageBody(await service.list(req.ctx, req.query)));

    app.get('/api/calls/:call_sid', {
      config: { permission: 'calls:read' },
      schema: { operationId: 'getCall',
        tags, headers: OrganizationHeader, params: CallSidParams,
        summary: 'Get a call: summary, transcript and cost breakdown',
        response: { 200: envelope(Call), ...errorResponses(...ORG_ROUTE_ERRORS, 404) },
      },
    }, async (req) => ({ success: true, data: await service.get(req.ctx, req.params.call_sid) }));

    app.patch('/api/calls/:call_sid', {
      // The voice runtime reports with the call's token (extensions.md §10), or with a key.
      config: { permission: 'calls:write', callToken: true },
      schema: { operationId: 'updateCall',
        tags, headers: OrganizationHeader, params: CallSidParams, body: UpdateCallBody,
        summary: 'Report progress (voice runtime): status moves forward only; a final status ends the call, debits its cost once and counts it in analytics; an ended call cannot change (409)',
        response: { 200: envelope(Call), ...errorResponses(...ORG_ROUTE_ERRORS, 404, 409) },
      },
    }, async (req) => ({ success: true, message: 'Call updated', data: await service.update(req.ctx, req.params.call_sid, req.body) }));
  };
}
