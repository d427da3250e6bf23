import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { errorResponses } from '../../core/schemas.ts';
import { registerReference } from './reference-routes.ts';
import type { SystemService } from './service.ts';

const tags = ['Service'];

export function systemRoutes(service: SystemService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get('/api/health', {
      config: { auth: 'public' },
      schema: { operationId: 'getHealth', tags, summary: 'Liveness', response: { 200: Type.Object({ status: Type.Literal('ok') }, { title: 'Health' }) } },
    }, async () => ({ status: 'ok' as const }));

    app.get('/api/ready', {
      config: { auth: 'public' },
      schema: { operationId: 'getReadiness',
        tags, summary: 'Readiness: the database answers',
        response: { 200: Type.Object({ status: Type.Literal('ready') }, { title: 'Readiness' }), ...errorResponses(503) },
      },
    }, async () => {
      await service.checkReady();
      return { status: 'ready' as const };
    });

    app.get('/api/openapi.json', {
      config: { auth: 'public' },
      schema: { operationId: 'getOpenApiDocument', hide: true },
    }, async () => app.swagger());

    await registerReference(app);
  };
}
