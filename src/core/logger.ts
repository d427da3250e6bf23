import pino from 'pino';

export type Logger = pino.Logger;

/**
 * The process's one logger: Fastify logs requests through it, and services and job workers get it
 * from the composition root, so every line of a process goes to the same place at the same level.
 */
export function createLogger(level: string): Logger {
  return pino({ level, serializers: { err: serializeError } });
}

interface QueryError extends Error {
  query: string;
  params: unknown[];
}

interface DatabaseError extends Error {
  code: string;
  severity?: string;
  constraint?: string;
  table?: string;
  column?: string;
  dataType?: string;
  schema?: string;
  routine?: string;
}

const isQueryError = (err: unknown): err is QueryError =>
  err instanceof Error && typeof (err as QueryError).query === 'string' && Array.isArray((err as QueryError).params);

const isDatabaseError = (err: unknown): err is DatabaseError =>
  err instanceof Error && typeof (err as DatabaseError).code === 'string' && /^[0-9A-Z]{5}$/.test((err as DatabaseError).code) && 'severity' in err;

/** The stack's frames without the message it starts with (which repeats the values, over several lines). */
const frames = (err: Error) => (err.stack ?? '').split('\n').filter((line) => /^\s+at /.test(line)).join('\n');

/**
 * A copy of `err` fit for the log. A failed query is logged as its statement and SQLSTATE only:
 * Drizzle's error carries every parameter (names, e-mail addresses, transcripts, secrets) in its
 * message and `params`, and PostgreSQL's message, `detail` and `where` quote the offending values.
 */
function redact(err: unknown, depth = 0): unknown {
  if (!(err instanceof Error) || depth > 8) return err;
  if (isQueryError(err)) {
    const copy = Object.assign(new Error(`Failed query: ${err.query}`), { name: 'DrizzleQueryError', query: err.query, cause: redact(err.cause, depth + 1) });
    copy.stack = `DrizzleQueryError: Failed query: ${err.query}\n${frames(err)}`;
    return copy;
  }
  if (isDatabaseError(err)) {
    const { code, constraint, table, column, dataType, schema, routine } = err;
    const message = `database error ${code}${constraint ? ` on constraint ${constraint}` : ''}`;
    const copy = Object.assign(new Error(message), { name: 'DatabaseError', sqlstate: code, constraint, table, column, dataType, schema, routine });
    copy.stack = `DatabaseError: ${message}\n${frames(err)}`;
    return copy;
  }
  if (err.cause === undefined) return err;
  const cause = redact(err.cause, depth + 1);
  if (cause === err.cause) return err;
  // Another error wrapping a database error (an AppError with its cause): the same, with the cause redacted.
  return Object.assign(Object.create(Object.getPrototypeOf(err) as object) as Error, err, { message: err.message, stack: err.stack, cause });
}

export function serializeError(err: unknown): unknown {
  return pino.stdSerializers.err(redact(err) as Error);
}
