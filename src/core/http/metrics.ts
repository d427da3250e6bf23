import { timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { FastifyInstance } from 'fastify';
import { Errors } from '../errors.ts';
import type { Metrics } from '../metrics.ts';

export interface MetricsExposure {
  /** A listener of its own for `/metrics` (METRICS_PORT), kept off the public port. */
  port?: number;
  /** Bearer token `/metrics` asks for (METRICS_TOKEN), on whichever port serves it. */
  token?: string;
}

/** Whether an `Authorization` header carries the token (compared in constant time). */
function authorized(header: string | undefined, token: string | undefined): boolean {
  if (!token) return true;
  const given = Buffer.from(header?.startsWith('Bearer ') ? header.slice(7) : '');
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * Times every response by its route pattern, and serves `/metrics` on the app's own port when a
 * token protects it and no separate port is configured (metrics name routes, queues and counts that
 * are nobody's business on a public port without one).
 */
export function registerHttpMetrics(app: FastifyInstance, metrics: Metrics, exposure: MetricsExposure): void {
  app.addHook('onResponse', async (request, reply) => {
    metrics.observeRequest(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
  });
  if (exposure.port !== undefined || !exposure.token) return;
  app.get('/metrics', { config: { auth: 'public' }, schema: { hide: true } }, async (request, reply) => {
    if (!authorized(request.headers.authorization, exposure.token)) throw Errors.metricsTokenRequired();
    return reply.type(metrics.contentType).send(await metrics.text());
  });
}

/** The METRICS_PORT listener: `GET /metrics` and nothing else. Resolves once it listens. */
export async function startMetricsServer(metrics: Metrics, options: { port: number; host: string; token?: string }): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    if (!authorized(req.headers.authorization, options.token)) {
      res.writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': 'Bearer' }).end('unauthorized\n');
      return;
    }
    metrics.text().then(
      (body) => res.writeHead(200, { 'content-type': metrics.contentType }).end(body),
      () => res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics unavailable\n'),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  server.unref();
  return server;
}
