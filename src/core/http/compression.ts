import type { FastifyInstance } from 'fastify';
import compress from '@fastify/compress';

/**
 * Brotli and gzip for the console's assets and the API's JSON (the browser says which it takes).
 * Left alone (the plugin's own rules, proven by test/compression.test.ts): a 206 answer to a Range
 * request (a recording being seeked: it must carry exactly the bytes its Content-Range names),
 * audio (already compressed; not in the types below), and bodies
 * under 1 KB (not worth the work). Streams (exports, downloads) are compressed as they flow.
 */
export async function registerCompression(app: FastifyInstance): Promise<void> {
  await app.register(compress, {
    global: true,
    encodings: ['br', 'gzip'],
    threshold: 1024,
    // Fastify's default types plus JavaScript and SVG; never audio or event streams.
    customTypes: /^(?:text\/(?!event-stream)|application\/(?:[\w.+-]*json|javascript|xml)(?:;|$)|image\/svg\+xml)/,
  });
}
