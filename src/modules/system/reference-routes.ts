import type { FastifyInstance } from 'fastify';
import scalar from '@scalar/fastify-api-reference';

/**
 * The interactive API reference at /api/docs: Scalar's standalone bundle, served by this server
 * (its @fastify plugin carries the script, so nothing comes from a CDN and the page works offline),
 * started by a script of ours instead of the plugin's inline one, so the strict CSP
 * (`script-src 'self'`) holds. Fonts are the browser's own: Scalar's default fonts would come from
 * its CDN.
 */
const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Switchboard API reference</title>
  </head>
  <body>
    <div id="app"></div>
    <script src="/api/docs/assets/js/scalar.js"></script>
    <script src="/api/docs/start.js"></script>
  </body>
</html>
`;

// No hosted extras: developer tools (deploy, share, generate SDK) and the AI agent call Scalar's services.
const START = `Scalar.createApiReference('#app', {
  url: '/api/openapi.json',
  withDefaultFonts: false,
  showDeveloperTools: 'never',
  agent: { disabled: true },
  metaData: { title: 'Switchboard API reference' },
});
`;

export async function registerReference(app: FastifyInstance): Promise<void> {
  const publicRoute = { auth: 'public' as const };
  app.get('/api/docs', { config: publicRoute, schema: { hide: true } }, async (_req, reply) => reply.type('text/html; charset=utf-8').send(PAGE));
  app.get('/api/docs/start.js', { config: publicRoute, schema: { hide: true } }, async (_req, reply) =>
    reply.type('application/javascript; charset=utf-8').header('cache-control', 'no-cache').send(START));
  // The plugin's routes: only its script is used (its own page starts Scalar with an inline script).
  await app.register(async (assets) => {
    assets.addHook('onRoute', (route) => {
      route.config = { ...route.config, auth: 'public' };
      route.schema = { ...route.schema, hide: true };
    });
    await assets.register(scalar, { routePrefix: '/api/docs/assets', configuration: { url: '/api/openapi.json' } });
  });
}
