import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import fastifyStatic from '@fastify/static';
import { Errors } from '../../core/errors.ts';

/** Where `npm install` (the root `prepare` script) builds the console. */
export const CONSOLE_DIST = path.resolve(import.meta.dirname, '../../../console/dist');

/** The router's `maxParamLength` (src/app.ts): a longer segment was its 414 before this wildcard matched everything. */
const MAX_SEGMENT_LENGTH = 256;

/** A path that names a file (an extension): never answered with the app's page. */
const FILE = /\.[A-Za-z0-9]+$/;

/**
 * The web console at `/`: its built files (hashed assets cached for a year, the rest revalidated),
 * and index.html for every other path outside /api, so the single-page app's addresses can be
 * reloaded and shared. Everything under /api stays the API's (an unknown API path is its 404).
 */
export function consoleRoutes(dist = CONSOLE_DIST) {
  return async (app: FastifyInstance) => {
    app.addHook('onRoute', (route) => {
      route.config = { ...route.config, auth: 'public' };
      route.schema = { ...route.schema, hide: true };
    });
    // A Range request names bytes of the file itself, never of one of its compressed copies.
    app.addHook('onRequest', async (req) => {
      if (req.headers.range) req.headers['accept-encoding'] = 'identity';
    });
    const built = fs.existsSync(path.join(dist, 'index.html'));
    if (built) {
      await app.register(fastifyStatic, {
        root: dist,
        prefix: '/',
        wildcard: false,
        index: false,
        // The built copies (console/scripts/precompress.mjs) are sent in place of their file, not served by their own names.
        globIgnore: ['index.html', '**/*.br', '**/*.gz'],
        preCompressed: true,
        cacheControl: false,
        setHeaders: (reply, file) => reply.header('cache-control', file.includes(`${path.sep}assets${path.sep}`) ? 'public, max-age=31536000, immutable' : 'no-cache'),
      });
    }
    app.get('/*', async (req, reply) => {
      const pathname = req.url.split('?')[0]!;
      if (pathname.split('/').some((segment) => segment.length > MAX_SEGMENT_LENGTH)) throw Errors.uriTooLong();
      if (pathname === '/api' || pathname.startsWith('/api/') || FILE.test(pathname)) throw Errors.routeNotFound(req.method, pathname);
      if (!built) throw Errors.unavailable('The console is not built: `npm install` builds it (or `npm run build -w console`)');
      return reply.header('cache-control', 'no-cache').sendFile('index.html', { cacheControl: false });
    });
  };
}
