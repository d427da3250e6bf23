import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ORG_ROUTE_ERRORS, envelope, errorResponses, listEnvelope, OrganizationHeader, pageBody } from '../../core/schemas.ts';
import { ApiKey, CreateApiKeyBody, CreatedApiKey, KeyIdParams, ListApiKeysQuery } from './schemas.ts';
import type { ApiKeyService } from './service.ts';

const tags = ['API keys'];

export function apiKeyRoutes(service: ApiKeyService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post('/api/api-keys', {
      config: { permission: 'api_keys:create', idempotency: 'in-transaction' },
      schema: { operationId: 'createApiKey',
        tags, summary: 'Create an API key (the full key is returned only here)',
        headers: OrganizationHeader, body: CreateApiKeyBody,
        response: { 200: envelope(CreatedApiKey), ...errorResponses(...ORG_ROUTE_ERRORS) },
      },
    }, async (req) => ({ success: true, message: 'API key created', data: await service.create(req.ctx, req.body) }));

    app.get('/api/api-keys', {
      config: { permission: 'api_keys:read' },
      schema: { operationId: 'listApiKeys',
        tags, summary: 'List API keys, newest first (revoked keys included)',
        headers: OrganizationHeader, querystring: ListApiKeysQuery,
        response: { 200: listEnvelope(ApiKey), ...errorResponses(...ORG_ROUTE_ERRORS) },
      },
    }, async (req) => pageBody(await service.list(req.ctx, req.query)));

    app.get('/api/api-keys/:key_id', {
      config: { permission: 'api_keys:read' },
      schema: { operationId: 'getApiKey',
        tags, summary: 'Get an API key', headers: OrganizationHeader, params: KeyIdParams,
        response: { 200: envelope(ApiKey), ...errorResponses(...ORG_ROUTE_ERRORS, 404) },
      },
    }, async (req) => ({ success: true, data: await service.get(req.ctx, req.params.key_id) }));

    app.delete('/api/api-keys/:key_id', {
      config: { permission: 'api_keys:delete' },
      schema: { operationId: 'revokeApiKey',
        tags, summary: 'Revoke an API key (admin, agent_manager; not a key above the caller)',
        headers: OrganizationHeader, params: KeyIdParams,
        response: { 200: envelope(ApiKey), ...errorResponses(...ORG_ROUTE_ERRORS, 404) },
      },
    }, async (req) => ({ success: true, message: 'API key revoked', data: await service.revoke(req.ctx, req.params.key_id) }));
  };
}
