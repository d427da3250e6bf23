import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';

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

const ASSETS = '/api/docs/assets';
/**
 * The routes Scalar's plugin registers when given a `url` (its redirect, its own page and its
 * script; only the script is used). They are declared here and answered by the plugin itself.
 */
const ASSET_ROUTES = [ASSETS, `${ASSETS}/`, `${ASSETS}/js/scalar.js`];
/** Headers of the plugin's answer that belong to its own connection, not to the one it is relayed on. */
const CONNECTION_HEADERS = new Set(['content-length', 'date', 'connection', 'keep-alive', 'transfer-encoding']);

/**
 * Scalar's plugin in a Fastify instance of its own, built on the first request for its assets: its
 * module holds a 4.9 MB script as a string twice over, which with its dependencies was 20 MB of the
 * idle server's resident memory (bench/memory.ts), for a page few processes ever serve.
 */
let assets: Promise<FastifyInstance> | undefined;
function scalarAssets(): Promise<FastifyInstance> {
  assets ??= (async () => {
    const { default: scalar } = await import('@scalar/fastify-api-reference');
    const instance = Fastify();
    await instance.register(scalar, { routePrefix: ASSETS, configuration: { url: '/api/openapi.json' } });
    await instance.ready();
    return instance;
  })().catch((err: unknown) => {
    assets = undefined; // the next request tries again
    throw err;
  });
  return assets;
}

async function relayToScalar(request: FastifyRequest, reply: FastifyReply) {
  const answer = await (await scalarAssets()).inject({ method: 'GET', url: request.url, headers: { host: request.headers.host ?? 'localhost' } });
  for (const [name, value] of Object.entries(answer.headers)) {
    if (value !== undefined && !CONNECTION_HEADERS.has(name)) reply.header(name, value);
  }
  reply.code(answer.statusCode);
  return answer.rawPayload.length ? reply.send(answer.rawPayload) : reply.send();
}

export async function registerReference(app: FastifyInstance): Promise<void> {
  const publicRoute = { auth: 'public' as const };
  app.get('/api/docs', { config: publicRoute, schema: { hide: true } }, async (_req, reply) => reply.type('text/html; charset=utf-8').send(PAGE));
  app.get('/api/docs/start.js', { config: publicRoute, schema: { hide: true } }, async (_req, reply) =>
    reply.type('application/javascript; charset=utf-8').header('cache-control', 'no-cache').send(START));
  for (const url of ASSET_ROUTES) app.get(url, { config: publicRoute, schema: { hide: true } }, relayToScalar);
}
