import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, Errors, type FieldError } from './errors.ts';

interface AjvIssue {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

function fieldErrors(context: string | undefined, issues: AjvIssue[]): FieldError[] {
  const where = context ?? 'body';
  return issues.map((issue) => {
    let pointer = issue.instancePath.replace(/^\//, '').replace(/\//g, '.');
    if (issue.keyword === 'required' && typeof issue.params.missingProperty === 'string') {
      pointer = pointer ? `${pointer}.${issue.params.missingProperty}` : issue.params.missingProperty;
    }
    if (issue.keyword === 'additionalProperties' && typeof issue.params.additionalProperty === 'string') {
      pointer = pointer ? `${pointer}.${issue.params.additionalProperty}` : issue.params.additionalProperty;
      return { path: `${where}.${pointer}`, message: 'is not a known field' };
    }
    const path = pointer ? `${where}.${pointer}` : where;
    return { path, message: issue.message ?? 'is invalid' };
  });
}

/**
 * The SQLSTATE of a PostgreSQL error (Drizzle wraps it as the cause). Class 22, data exceptions (a
 * value out of range, an invalid date or encoding...), is a value the client sent that no check
 * caught: the client's mistake, answered 400 rather than 500.
 */
function dataException(error: Error): string | undefined {
  for (let err: unknown = error, depth = 0; err instanceof Error && depth < 5; err = err.cause, depth++) {
    const code = (err as { code?: unknown }).code;
    if (typeof code === 'string' && /^22[0-9A-Z]{3}$/.test(code) && 'severity' in err) return code;
  }
  return undefined;
}

/** Maps anything thrown to one AppError; the only place that knows Fastify's own error shapes. */
export function toAppError(error: FastifyError | Error): AppError {
  if (error instanceof AppError) return error;
  const sqlstate = dataException(error);
  if (sqlstate) return Errors.validation(`A value of the request cannot be stored or compared (SQLSTATE ${sqlstate})`);
  const fastifyError = error as FastifyError & { validationContext?: string };
  if (fastifyError.validation) {
    const errors = fieldErrors(fastifyError.validationContext, fastifyError.validation as unknown as AjvIssue[]);
    return Errors.validation('Request validation failed', errors);
  }
  const status = fastifyError.statusCode;
  if (status === 413) return Errors.payloadTooLarge('The request body is too large');
  if (status === 415) return Errors.unsupportedMediaType('The Content-Type of the request is not supported');
  if (status === 429) return Errors.rateLimited(60);
  if (status && status >= 400 && status < 500) {
    const code = fastifyError.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error instanceof SyntaxError ? 'invalid_json' : 'bad_request';
    return new AppError(status, code, error.message);
  }
  return Errors.internal();
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const appError = toAppError(error);
    if (appError.status >= 500) request.log.error({ err: error }, 'request failed');
    if (appError.headers) reply.headers(appError.headers);
    return reply.status(appError.status).send({
      detail: appError.detail,
      code: appError.code,
      ...(appError.errors ? { errors: appError.errors } : {}),
    });
  });

  app.setNotFoundHandler(async (request) => {
    throw Errors.routeNotFound(request.method, request.url.split('?')[0]!);
  });
}
