import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import helmet, { type HelmetOptions } from 'helmet';

/**
 * Helmet's headers, computed once: they depend on the options only, and @fastify/helmet rebuilt
 * helmet's middleware (re-parsing the CSP) on every request, about 3% of a list request's CPU.
 */
export function securityHeaders(options?: HelmetOptions): Record<string, string> {
  const headers: Record<string, string> = {};
  const response = {
    setHeader(name: string, value: string | number | readonly string[]) {
      headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
    },
    removeHeader(name: string) {
      delete headers[name.toLowerCase()];
    },
  };
  helmet(options)({} as IncomingMessage, response as unknown as ServerResponse, (err?: unknown) => {
    if (err) throw err;
  });
  return headers;
}

/** Every response carries the security headers (a route may still set its own, e.g. CORP on signed recordings). */
export function registerSecurityHeaders(app: FastifyInstance, options?: HelmetOptions): void {
  const headers = securityHeaders(options);
  app.addHook('onRequest', (_request, reply, done) => {
    reply.headers(headers);
    done();
  });
}

/**
 * The console's "Talk to agent" opens the runtime's preview WebSocket. On the console's own host, the
 * CSP's `'self'` covers it (ws/wss to the same host and port); runtimes on another host
 * (RUNTIME_STREAM_URL's) are added to `connect-src`. Helmet's defaults otherwise.
 */
export function previewSocketPolicy(publicBaseUrl: string, previewUrl: string): HelmetOptions | undefined {
  const page = new URL(publicBaseUrl);
  const socket = new URL(previewUrl);
  if (socket.host === page.host) return undefined;
  return { contentSecurityPolicy: { directives: { connectSrc: ["'self'", socket.origin] } } };
}
