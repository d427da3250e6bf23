/**
 * `CallPlatform` over the API's HTTP routes with the call token (extensions.md §10). Plain fetch: the
 * SDK does not carry the runtime's own routes, and the runtime needs nothing else from it. Each
 * request has a deadline so a stalled API cannot hold a call's resources forever.
 */
import type {
  CallCredentials, CallPlatform, CallReport, KnowledgeHit, RuntimeCallConfig, ToolCallResult,
} from './call-platform.ts';

const REQUEST_TIMEOUT_MS = 15_000;
/** A webhook tool has its own timeout (at most 30 s at the platform); leave room above it. */
const TOOL_TIMEOUT_MS = 40_000;
const KNOWLEDGE_TOP_K = 5;

export class PlatformError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.name = 'PlatformError';
    this.status = status;
    this.code = code;
  }
}

/** The organization a call token belongs to: the API verifies the token; the runtime only reads the claim. */
export function organizationOfToken(token: string): string | null {
  const payload = token.split('.')[1];
  if (!payload) return null;
  try {
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
    const org = claims.organization_id ?? claims.org_id ?? claims.org;
    return typeof org === 'string' ? org : null;
  } catch {
    return null;
  }
}

export class HttpCallPlatform implements CallPlatform {
  readonly #base: string;
  readonly #sid: string;
  readonly #headers: Record<string, string>;

  constructor(credentials: CallCredentials) {
    this.#base = credentials.apiBaseUrl.replace(/\/+$/, '');
    this.#sid = encodeURIComponent(credentials.callSid);
    this.#headers = { authorization: `Bearer ${credentials.token}`, 'x-organization-id': credentials.organizationId };
  }

  async load(): Promise<RuntimeCallConfig> {
    return (await this.#json('GET', `/api/runtime/calls/${this.#sid}`)) as RuntimeCallConfig;
  }

  async report(patch: CallReport): Promise<void> {
    await this.#json('PATCH', `/api/calls/${this.#sid}`, patch);
  }

  async uploadRecording(wav: Buffer): Promise<void> {
    await this.#send('PUT', `/api/calls/${this.#sid}/recording`, { 'content-type': 'audio/wav' }, wav, REQUEST_TIMEOUT_MS * 4);
  }

  async callTool(name: string, args: Record<string, unknown>): Promise<ToolCallResult> {
    const path = `/api/runtime/calls/${this.#sid}/tools/${encodeURIComponent(name)}`;
    return (await this.#json('POST', path, { arguments: args }, TOOL_TIMEOUT_MS)) as ToolCallResult;
  }

  async searchKnowledge(query: string): Promise<KnowledgeHit[]> {
    const hits = await this.#json('POST', '/api/knowledge-base/search', { query: query.slice(0, 2000), top_k: KNOWLEDGE_TOP_K });
    return (hits as KnowledgeHit[]).slice(0, KNOWLEDGE_TOP_K);
  }

  /** JSON in, the envelope's `data` out. */
  async #json(method: string, path: string, body?: unknown, timeoutMs = REQUEST_TIMEOUT_MS): Promise<unknown> {
    const headers: Record<string, string> = body === undefined ? {} : { 'content-type': 'application/json' };
    const response = await this.#send(method, path, headers, body === undefined ? undefined : JSON.stringify(body), timeoutMs);
    const text = await response.text();
    const parsed = text ? (JSON.parse(text) as { data?: unknown }) : {};
    return parsed.data ?? parsed;
  }

  async #send(method: string, path: string, headers: Record<string, string>, body: string | Buffer | undefined, timeoutMs: number): Promise<Response> {
    const response = await fetch(`${this.#base}${path}`, {
      method, headers: { ...this.#headers, ...headers }, body, signal: AbortSignal.timeout(timeoutMs),
    });
    if (!response.ok) {
      const text = await response.text();
      let code = 'http_error';
      let detail = text.slice(0, 500);
      try {
        const error = JSON.parse(text) as { code?: string; detail?: string };
        code = error.code ?? code;
        detail = error.detail ?? detail;
      } catch { /* not JSON: keep the text */ }
      throw new PlatformError(response.status, code, `${method} ${path}: ${response.status} ${detail}`);
    }
    return response;
  }
}
