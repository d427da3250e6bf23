import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Errors } from '../../core/errors.ts';
import { ORG_ROUTE_ERRORS, envelope, errorResponses, listEnvelope, MessageEnvelope, OrganizationHeader, pageBody } from '../../core/schemas.ts';
import { CreateIntegrationBody, Integration, IntegrationIdParams, IntegrationSummary, ListIntegrationsQuery, UpdateIntegrationBody } from './schemas.ts';
import type { IntegrationService } from './service.ts';

const tags = ['Integrations'];

export function integrationRoutes(service: IntegrationService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post('/api/integrations', {
      config: { permission: 'integrations:create' },
      schema: { operationId: 'createIntegration',
        tags, summary: 'Create an integration (credentials are encrypted and never returned)', headers: OrganizationHeader, body: CreateIntegrationBody,
        response: { 200: envelope(Integration), ...errorResponses(...ORG_ROUTE_ERRORS) },
      },
    }, async (req) => ({ success: true, message: 'Integration created', data: await service.create(req.ctx, req.body) }));

    app.get('/api/integrations', {
      config: { permission: 'integrations:read' },
      schema: { operationId: 'listIntegrations',
        tags, summary: 'List integrations, newest first', headers: OrganizationHeader, querystring: ListIntegrationsQuery,
        response: { 200: listEnvelope(IntegrationSummary), ...errorResponses(...ORG_ROUTE_ERRORS) },
      },
    }, async (req) => pageBody(await service.list(req.ctx, req.query)));

    app.get('/api/integrations/:integration_id', {
      config: { permission: 'integrations:read' },
      schema: { operationId: 'getIntegration',
        tags, summary: 'Get an integration', headers: OrganizationHeader, params: IntegrationIdParams,
        response: { 200: envelope(Integration), ...errorResponses(...ORG_ROUTE_ERRORS, 404) },
      },
    }, async (req) => ({ success: true, data: await service.get(req.ctx, req.params.integration_id) }));

    app.patch('/api/integrations/:integration_id', {
      config: { permission: 'integrations:update' },
      schema: { operationId: 'updateIntegration',
        tags, summary: 'Rename an integration or replace its credentials', headers: OrganizationHeader, params: IntegrationIdParams,
        body: UpdateIntegrationBody, response: { 200: envelope(Integration), ...errorResponses(...ORG_ROUTE_ERRORS, 404) },
      },
    }, async (req) => ({ success: true, message: 'Integration updated', data: await service.update(req.ctx, req.params.integration_id, req.body) }));

    app.delete('/api/integrations/:integration_id', {
      config: { permission: 'integrations:delete' },
      schema: { operationId: 'deleteIntegration',
        tags, summary: 'Delete an integration (409 while phone numbers use it)', headers: OrganizationHeader, params: IntegrationIdParams,
        response: { 200: MessageEnvelope, ...errorResponses(...ORG_ROUTE_ERRORS, 404, 409) },
      },
    }, async (req) => {
      await service.delete(req.ctx, req.params.integration_id);
      return { success: true, message: 'Integration deleted' };
    });

    app.post('/api/integrations/:integration_id/validate', {
      config: { permission: 'integrations:validate' },
      // The specification requires Content-Type: application/json on this body-less call.
      preValidation: async (req) => {
        if (!String(req.headers['content-type'] ?? '').toLowerCase().startsWith('application/json')) {
          throw Errors.unsupportedMediaType('Send Content-Type: application/json (with no body)');
        }
      },
      schema: { operationId: 'validateIntegration',
        tags, summary: 'Validate the stored credentials with a test call to the provider (active or invalid)',
        headers: OrganizationHeader, params: IntegrationIdParams,
        response: { 200: envelope(Integration), ...errorResponses(...ORG_ROUTE_ERRORS, 404, 415) },
      },
    }, async (req) => {
      const { message, data } = await service.validate(req.ctx, req.params.integration_id);
      return { success: true, message, data };
    });
  };
}
