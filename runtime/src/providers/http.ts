/**
 * What every adapter shares: the vendor's address (or the integration's `base_url` in its place),
 * HTTP errors turned into ProviderError codes, and streamed response bodies read chunk by chunk.
 */
import { ProviderError } from './types.ts';

/** How long a vendor may take to answer with headers before the request counts as timed out. */
export const HEADERS_TIMEOUT_MS = 15_000;

/** The vendor's address or `base_url` (trailing slashes trimmed). */
export function baseUrl(configured: string | null | undefined, vendorDefault: string): string {
  return (configured && configured.trim() !== '' ? configured.trim() : vendorDefault).replace(/\/+$/, '');
}

/**
 * OpenAI-style bases: the vendor's is given without `/v1` (`https://api.openai.com`), but people
 * paste a self-hosted server's as `http://host:8000/v1`; both mean the same server.
 */
export function openAiBase(configured: string | null | undefined, vendorDefault: string): string {
  return baseUrl(configured, vendorDefault).replace(/\/v1$/, '');
}

/** http→ws, https→wss, so a WebSocket vendor's `base_url` can be given as either. */
export function webSocketBase(configured: string | null | undefined, vendorDefault: string): string {
  return baseUrl(configured, vendorDefault).replace(/^http(s?):\/\//, 'ws$1://');
}

export function codeForStatus(status: number): string {
  if (status === 401 || status === 403) return 'unauthorized';
  if (status === 429) return 'rate_limited';
  if (status === 408 || status === 504) return 'timeout';
  if (status >= 500) return 'unavailable';
  return 'bad_request';
}

/** Agent languages are stored uppercase (EN, EN-US): `en` / `en-US` for the vendors. */
export function languageTag(language: string): string {
  const [primary = 'en', region] = language.split(/[-_]/);
  return region ? `${primary.toLowerCase()}-${region.toUpperCase()}` : primary.toLowerCase();
}
export function languageCode(language: string): string {
  return languageTag(language).split('-')[0]!;
}

export interface VendorRequest {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string | FormData;
  signal?: AbortSignal;
  headersTimeoutMs?: number;
  /** A vendor whose refusals do not follow the status alone (Google: a wrong key is 400 API_KEY_INVALID). */
  classify?: (status: number, body: string) => string | undefined;
}

/** The abort that came from the caller (not our timeout): the caller wants nothing more. */
export class AbortedByCaller extends Error {
  constructor() {
    super('aborted');
    this.name = 'AbortedByCaller';
  }
}

/**
 * Sends a request and returns the response once its status is known to be a success; any failure
 * is a ProviderError (the vendor's own error text kept, trimmed, in the message).
 */
export async function vendorFetch(provider: string, request: VendorRequest): Promise<Response> {
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), request.headersTimeoutMs ?? HEADERS_TIMEOUT_MS);
  const signal = request.signal ? AbortSignal.any([request.signal, timeout.signal]) : timeout.signal;
  let response: Response;
  try {
    response = await fetch(request.url, { method: request.method ?? 'POST', headers: request.headers, body: request.body, signal });
  } catch (error) {
    if (request.signal?.aborted) throw new AbortedByCaller();
    if (timeout.signal.aborted) throw new ProviderError(provider, 'timeout', `${provider} did not answer within ${request.headersTimeoutMs ?? HEADERS_TIMEOUT_MS} ms`);
    throw new ProviderError(provider, 'unavailable', `${provider} unreachable: ${describe(error)}`);
  } finally {
    clearTimeout(timer);
  }
  if (response.status >= 400) {
    const text = await response.text().catch(() => '');
    const code = request.classify?.(response.status, text) ?? codeForStatus(response.status);
    throw new ProviderError(provider, code, `${provider} answered HTTP ${response.status}${text ? `: ${text.slice(0, 300)}` : ''}`);
  }
  return response;
}

/** A response body's chunks; a connection that drops mid-body is a ProviderError, the caller's abort ends it quietly. */
export async function* bodyChunks(provider: string, response: Response, signal?: AbortSignal): AsyncGenerator<Uint8Array> {
  if (!response.body) return;
  const reader = response.body.getReader();
  try {
    while (true) {
      let step: Awaited<ReturnType<typeof reader.read>>;
      try {
        step = await reader.read();
      } catch (error) {
        if (signal?.aborted) return;
        throw new ProviderError(provider, 'unavailable', `${provider} connection dropped: ${describe(error)}`);
      }
      if (step.done) return;
      yield step.value;
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}

export function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    return cause instanceof Error ? `${error.message} (${cause.message})` : error.message;
  }
  return String(error);
}
