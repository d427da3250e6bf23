import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { errorResponses } from '../../core/schemas.ts';
import { renderDocsPage } from './docs-page.ts';
import type { SystemService } from './service.ts';

const tags = ['Service'];

export function systemRoutes(service: SystemService): FastifyPluginAsyncTypebox {
  return async (app) => {
    let page: string | undefined; // rendered once, on first request: the routes are fixed by then
    app.get('/api/health', {
      config: { auth: 'public' },
      schema: { tags, summary: 'Liveness', response: { 200: Type.Object({ status: Type.Literal('ok') }) } },
    }, async () => ({ status: 'ok' as const }));

    app.get('/api/ready', {
      config: { auth: 'public' },
      schema: {
        tags, summary: 'Readiness: the database answers',
        response: { 200: Type.Object({ status: Type.Literal('ready') }), ...errorResponses(503) },
      },
    }, async () => {
      await service.checkReady();
      return { status: 'ready' as const };
    });

    app.get('/api/openapi.json', {
      config: { auth: 'public' },
      schema: { hide: true },
    }, async () => app.swagger());

    app.get('/api/docs', {
      config: { auth: 'public' },
      schema: { hide: true },
    }, async (_req, reply) => {
      page ??= renderDocsPage(app.swagger() as Record<string, unknown>);
      return reply.type('text/html; charset=utf-8').send(page);
    });
  };
}
