import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { paths } from './schema.ts';

export interface SwitchboardOptions {
  /** Where the API is, e.g. `https://switchboard.example.com` (the paths start with /api). */
  baseUrl: string;
  /** An API key (`sk_...`), or a bearer token (a JWT, or a function giving the current one). */
  apiKey?: string;
  token?: string | (() => string | Promise<string>);
  /** The organization requests act in (X-Organization-Id); not needed by the few user-level calls. */
  organizationId?: string;
  /** Per attempt (default 30 s); a caller's AbortSignal can end a request sooner. */
  timeoutMs?: number;
  /** Retries after 429 and 503 (default 3), waiting as Retry-After says, else backing off from 500 ms. */
  maxRetries?: number;
  /** A fetch of your own (tests, proxies); the global one by default. */
  fetch?: typeof fetch;
  /** Ends every request of this client when aborted (see `Switchboard.withOptions`). */
  signal?: AbortSignal;
}

/** A refusal of the API: the HTTP status and the body's `{detail, code, errors?}`. */
export class SwitchboardError extends Error {
  override name = 'SwitchboardError';
  readonly status: number;
  readonly code: string;
  readonly detail: string;
  readonly errors: Array<{ path: string; message: string }>;
  readonly requestId: string | null;
  constructor(status: number, body: { detail?: string; code?: string; errors?: Array<{ path: string; message: string }> } | undefined, requestId: string | null) {
    super(`${status} ${body?.code ?? 'error'}: ${body?.detail ?? 'the API refused the request'}`);
    this.status = status;
    this.code = body?.code ?? 'unknown_error';
    this.detail = body?.detail ?? '';
    this.errors = body?.errors ?? [];
    this.requestId = requestId;
  }
}

const RETRIED = new Set([429, 503]);
const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** How long to wait before attempt `n + 1`: Retry-After when the server says, else exponential with jitter. */
function delayMs(response: Response, attempt: number): number {
  const retryAfter = response.headers.get('retry-after');
  const seconds = retryAfter === null ? NaN : Number(retryAfter);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.min(seconds, 120) * 1000;
  const at = retryAfter ? Date.parse(retryAfter) : NaN;
  if (Number.isFinite(at)) return Math.max(0, at - Date.now());
  return 500 * 2 ** attempt * (0.75 + Math.random() / 2);
}

const sleep = (ms: number, signal?: AbortSignal | null) => new Promise<void>((resolve, reject) => {
  const timer = setTimeout(resolve, ms);
  signal?.addEventListener('abort', () => { clearTimeout(timer); reject(signal.reason); }, { once: true });
});

/**
 * The fetch every request goes through: a timeout per attempt, and retries of 429 and 503 with the
 * same request, so a write keeps the Idempotency-Key it was given once.
 */
export function retryingFetch(options: Pick<SwitchboardOptions, 'fetch' | 'timeoutMs' | 'maxRetries' | 'signal'>): (request: Request) => Promise<Response> {
  const send = options.fetch ?? globalThis.fetch;
  const maxRetries = options.maxRetries ?? 3;
  const timeoutMs = options.timeoutMs ?? 30_000;
  return async (request) => {
    // A streamed body (an upload) is sent once, as it is: a copy for a retry would hold it in memory.
    const streamed = request.headers.has('x-switchboard-stream');
    for (let attempt = 0; ; attempt++) {
      const signal = AbortSignal.any([request.signal, AbortSignal.timeout(timeoutMs), ...(options.signal ? [options.signal] : [])]);
      const response = await send(new Request(streamed ? request : request.clone(), { signal }));
      const canRetry = RETRIED.has(response.status) && attempt < maxRetries && !streamed;
      if (!canRetry) return response;
      await response.body?.cancel();
      await sleep(delayMs(response, attempt), options.signal ?? request.signal);
    }
  };
}

/** Credentials, organization and an Idempotency-Key per logical write, on every request. */
function identify(options: SwitchboardOptions): Middleware {
  return {
    async onRequest({ request }) {
      if (options.apiKey) request.headers.set('x-api-key', options.apiKey);
      else if (options.token) {
        const token = typeof options.token === 'function' ? await options.token() : options.token;
        request.headers.set('authorization', `Bearer ${token}`);
      }
      if (options.organizationId && !request.headers.has('x-organization-id')) request.headers.set('x-organization-id', options.organizationId);
      if (WRITES.has(request.method) && !request.headers.has('idempotency-key')) request.headers.set('idempotency-key', crypto.randomUUID());
      return request;
    },
  };
}

export type ApiClient = Client<paths>;

export function createTransport(options: SwitchboardOptions): { client: ApiClient; send: (request: Request) => Promise<Response> } {
  const send = retryingFetch(options);
  const client = createClient<paths>({ baseUrl: options.baseUrl.replace(/\/$/, ''), fetch: send });
  client.use(identify(options));
  return { client, send: async (request) => send(await identified(options, request)) };
}

/** The same headers as the typed client's, for requests made without it (streamed uploads and downloads). */
async function identified(options: SwitchboardOptions, request: Request): Promise<Request> {
  const result = await identify(options).onRequest!({ request, schemaPath: '', params: {}, id: '', options: {} as never });
  return result instanceof Request ? result : request;
}

/** The `data` of a success, or the SwitchboardError of a refusal. */
export async function unwrap<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok || error !== undefined) throw new SwitchboardError(response.status, error as never, response.headers.get('x-request-id'));
  return data as T;
}

/** Refuses a non-success response of a request made without the typed client. */
export async function ensureOk(response: Response): Promise<Response> {
  if (response.ok) return response;
  const body = await response.json().catch(() => undefined);
  throw new SwitchboardError(response.status, body as never, response.headers.get('x-request-id'));
}
