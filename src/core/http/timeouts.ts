import net from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { HttpConfig } from '../../config.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A large upload (knowledge-base files, recordings): held to a minimum transfer rate instead of a deadline. */
    largeUpload?: boolean;
  }
}

const CHECK_MS = 250;

/** The Node server options of the HTTP timeouts (headers; idle sockets are Fastify's connectionTimeout). */
export function serverTimeoutOptions(http: HttpConfig) {
  return {
    connectionTimeout: http.idleTimeoutMs,
    // Node checks its headers deadline on this interval (30 s by default).
    http: { headersTimeout: http.headersTimeoutMs, connectionsCheckingInterval: Math.min(1000, http.headersTimeoutMs) },
  };
}

/**
 * Cuts the connection of a client that holds a request open by trickling its body. Node's request
 * timeout would cut a slow but honest 1 GiB upload too, so bodies are watched here: every body must
 * keep arriving (no pause longer than the body timeout), an ordinary body must be complete within
 * the body timeout, and a large upload must average at least the minimum rate once the body timeout
 * has passed.
 */
export function registerBodyWatchdog(app: FastifyInstance, http: HttpConfig): void {
  app.addHook('onRequest', (request, _reply, done) => {
    if (hasBody(request)) watch(request, http);
    done();
  });
}

function hasBody(request: FastifyRequest): boolean {
  const { headers } = request.raw;
  // An injected request (app.inject) has no connection to hold or cut, and never sets `complete`.
  if (!(request.raw.socket instanceof net.Socket)) return false;
  return !request.raw.complete && (headers['transfer-encoding'] !== undefined || Number(headers['content-length'] ?? 0) > 0);
}

function watch(request: FastifyRequest, http: HttpConfig): void {
  const raw = request.raw;
  const socket = raw.socket;
  const upload = request.routeOptions.config?.largeUpload === true;
  const started = Date.now();
  const startBytes = socket.bytesRead;
  let lastBytes = startBytes;
  let lastProgress = started;
  const timer = setInterval(() => {
    if (raw.complete || socket.destroyed) return stop();
    const now = Date.now();
    if (socket.bytesRead !== lastBytes) {
      lastBytes = socket.bytesRead;
      lastProgress = now;
    }
    const elapsed = now - started;
    const stalled = now - lastProgress > http.bodyTimeoutMs;
    const late = !upload && elapsed > http.bodyTimeoutMs;
    const slow = upload && elapsed > http.bodyTimeoutMs && ((lastBytes - startBytes) * 1000) / elapsed < http.uploadMinBytesPerSecond;
    if (stalled || late || slow) {
      request.log.info({ received: lastBytes - startBytes, elapsed_ms: elapsed, reason: stalled ? 'stalled' : late ? 'late' : 'slow' }, 'request body too slow: connection closed');
      stop();
      socket.destroy();
    }
  }, CHECK_MS);
  timer.unref();
  const stop = () => clearInterval(timer);
  raw.once('close', stop);
}
