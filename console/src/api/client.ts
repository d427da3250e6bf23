import createClient from 'openapi-fetch';
import type { components, paths } from '@switchboard/sdk/schema';
import { authHeaders, refreshOnce } from '../auth/credentials.ts';
import { DESTINATION_REFUSED_HELP, fieldMessage } from './fieldMessages.ts';

export type Schemas = components['schemas'];

/** A refusal of the API, with the `{detail, code, errors?}` every error body carries. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly detail: string;
  readonly errors: Array<{ path: string; message: string }>;
  constructor(status: number, body: { detail?: string; code?: string; errors?: Array<{ path: string; message: string }> } | undefined) {
    super(body?.detail || `The server answered ${status}`);
    this.status = status;
    this.code = body?.code ?? 'unknown_error';
    this.detail = body?.detail || `The server answered ${status}`;
    this.errors = body?.errors ?? [];
  }
  /**
   * A body field's validation error in words (`errors[].path` is like `body.agent_name`); for an
   * address field the outbound rule refused, why and what to do.
   */
  fieldError(field: string): string | undefined {
    if (this.code === 'destination_refused' && URL_FIELDS.has(field)) return `${this.detail}. ${DESTINATION_REFUSED_HELP}`;
    return fieldMessage(this.errors, field);
  }
}

/** The fields that hold an address Switchboard sends requests to. */
const URL_FIELDS = new Set(['url', 'webhook_url', 'base_url']);

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Every request carries the current credentials (a bearer token kept in memory, or the tab's API key)
 * and the organization; a 401 on a signed-in session refreshes the token by its cookie once and retries.
 */
async function send(request: Request): Promise<Response> {
  const copy = request.clone();
  // Sign-in, refresh and sign-out are public: the session cookie (or the link's token) is their credential.
  const signingIn = /^\/api\/auth\/(session|sign-in-links)/.test(new URL(request.url).pathname);
  const withAuth = (req: Request) => {
    if (!signingIn) for (const [name, value] of Object.entries(authHeaders())) if (!req.headers.has(name)) req.headers.set(name, value);
    if (WRITES.has(req.method) && !req.headers.has('idempotency-key')) req.headers.set('idempotency-key', crypto.randomUUID());
    return req;
  };
  const response = await fetch(withAuth(request));
  if (response.status !== 401 || signingIn) return response;
  return (await refreshOnce()) ? fetch(withAuth(copy)) : response;
}

/** The typed client (types generated from the OpenAPI document, in @switchboard/sdk): the console's only way to the API. */
export const api = createClient<paths>({ baseUrl: window.location.origin, fetch: send, credentials: 'same-origin' });

/** The body of a success, or the ApiError of a refusal. */
export async function unwrap<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok || error !== undefined) throw new ApiError(response.status, typeof error === 'object' ? (error as never) : undefined);
  return data as T;
}
