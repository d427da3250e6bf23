import pino from 'pino';

export type Logger = pino.Logger;

/**
 * The process's one logger: Fastify logs requests through it, and services and job workers get it
 * from the composition root, so every line of a process goes to the same place at the same level.
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  const options = { level, serializers: { err: serializeError, req: serializeRequest } };
  return destination ? pino(options, destination) : pino(options);
}

/**
 * Query parameters whose values are logged: paging, sorting, enumerations, time ranges, amounts and
 * ids. Every other value is `[REDACTED]`, the name kept: signatures of recording and export links
 * (`sig`, a bearer credential for an hour), search terms (`q`, `search`), `metadata.<key>` filters,
 * phone numbers, sign-in tokens, and any parameter added later until it is listed here.
 */
const LOGGED_QUERY_VALUES = new Set([
  'page_size', 'cursor', 'limit', 'sort_by', 'sort_direction', 'type', 'types', 'event_type', 'status', 'call_type',
  'end_reason', 'billing_status', 'has_recording', 'min_duration', 'max_duration', 'min_cost', 'max_cost',
  'from', 'to', 'start_date', 'end_date', 'start_time', 'end_time', 'start', 'end', 'timezone', 'granularity',
  'group_by', 'metrics', 'agent_id', 'campaign_id', 'actor_id', 'action', 'resource_type', 'resource_id',
  'org', 'expires', 'result',
]);

export const REDACTED = '[REDACTED]';

/** `a=1&sig=abc&q=` → `a=1&sig=[REDACTED]&q=`: names kept, values kept only for LOGGED_QUERY_VALUES. */
export function redactQuery(query: string): string {
  return query.split('&').map((pair) => {
    const equals = pair.indexOf('=');
    if (equals < 0 || equals === pair.length - 1) return pair;
    const name = pair.slice(0, equals);
    let decoded = name;
    try {
      decoded = decodeURIComponent(name.replaceAll('+', ' '));
    } catch {
      // a malformed name is logged as sent, its value redacted
    }
    return LOGGED_QUERY_VALUES.has(decoded) ? pair : `${name}=${REDACTED}`;
  }).join('&');
}

/** What the log sees of a Fastify request (structurally: core does not depend on Fastify's types here). */
interface LoggedRequest {
  method: string;
  url: string;
  routeOptions?: { url?: string };
  host?: string;
  ip?: string;
  socket?: { remotePort?: number };
}

/**
 * The request line: the route pattern (`/api/calls/:call_sid`, not the id; the raw path only when no
 * route matched) and the query redacted, so the log holds no usable link and no search term.
 */
function serializeRequest(req: LoggedRequest) {
  const mark = req.url.indexOf('?');
  const path = mark < 0 ? req.url : req.url.slice(0, mark);
  const route = req.routeOptions?.url ?? path;
  return {
    method: req.method,
    url: mark < 0 ? route : `${route}?${redactQuery(req.url.slice(mark + 1))}`,
    host: req.host,
    remoteAddress: req.ip,
    remotePort: req.socket?.remotePort,
  };
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
