import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Errors, type AppError } from '../errors.ts';

/*
 * The errors raised before a request reaches a route (Node's HTTP parser, Fastify's router) get the
 * documented body `{detail, code}` too, instead of each layer's own shape.
 */

const body = (error: AppError) => JSON.stringify({ detail: error.detail, code: error.code });

/** Node's HTTP parser refused the request (bad request line, headers too large, headers too slow): answered on the raw socket. */
export function clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const error = err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
    ? Errors.requestTimeout()
    : err.code === 'HPE_HEADER_OVERFLOW' ? Errors.headersTooLarge() : Errors.badRequest('The request is not valid HTTP');
  const text = body(error);
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${error.status} ${statusText(error.status)}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
    );
  }
  socket.destroy(err);
}

const statusText = (status: number) => ({ 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' })[status] ?? 'Error';

/** Fastify's router refused the URL (an undecodable path, a path parameter over the limit). */
export function frameworkErrors(error: Error & { code?: string }, request: FastifyRequest, reply: FastifyReply): void {
  const appError = error.code === 'FST_ERR_BAD_URL'
    ? Errors.badRequest('The URL cannot be decoded', 'invalid_url')
    : error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? Errors.uriTooLong() : Errors.internal({ cause: error });
  // No hook runs for these answers: the request id is set here, as the onRequest hook sets it for others.
  void reply.code(appError.status).header('x-request-id', request.id).type('application/json; charset=utf-8').send(body(appError));
}
