import type { FastifyInstance } from 'fastify';

/**
 * One log line per request, written when it is answered: the request (route pattern and redacted
 * query, see core/logger.ts), its status and how long it took. Fastify's own request logging writes
 * two lines (one on arrival, one on answer); at list-serving rates the second line cost about 2.7 %
 * of throughput in the outside profile of issue 33, and everything in the arrival line is in this one.
 * A request whose client went away before the answer is logged as aborted; at `debug` the arrival
 * is logged too (what a shutdown's in-flight requests are traced by).
 */
export function registerRequestLog(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    if (request.log.level === 'debug' || request.log.level === 'trace') request.log.debug({ req: request }, 'incoming request');
  });
  app.addHook('onResponse', async (request, reply) => {
    request.log.info({ req: request, res: { statusCode: reply.statusCode }, responseTime: reply.elapsedTime }, 'request completed');
  });
  app.addHook('onRequestAbort', async (request) => {
    request.log.info({ req: request }, 'request aborted');
  });
}
