/**
 * `CallPlatform` over the API with the call token (extensions.md §10), through `@switchboard/sdk`, like
 * any outside runtime: the SDK's typed routes, its retries of 429 and 503, and a deadline on every
 * request so a stalled API cannot hold a call's resources forever.
 */
import { Switchboard } from '@switchboard/sdk';
import type {
  CallCredentials, CallPlatform, CallReport, KnowledgeHit, RuntimeCallConfig, ToolCallResult,
} from './call-platform.ts';

const REQUEST_TIMEOUT_MS = 15_000;
/** A webhook tool has its own timeout (at most 30 s at the platform); leave room above it. */
const TOOL_TIMEOUT_MS = 40_000;
const KNOWLEDGE_TOP_K = 5;

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
  readonly #sid: string;
  readonly #api: Switchboard;

  constructor(credentials: CallCredentials) {
    this.#sid = credentials.callSid;
    this.#api = new Switchboard({
      baseUrl: credentials.apiBaseUrl.replace(/\/+$/, ''), token: credentials.token, organizationId: credentials.organizationId,
      timeoutMs: REQUEST_TIMEOUT_MS,
    });
  }

  // The runtime's own types (call-platform.ts) are its view of these answers: the engine reads no
  // more than they name, and its tests pin them against the API.
  async load(): Promise<RuntimeCallConfig> {
    return (await this.#api.runtime.call(this.#sid)) as unknown as RuntimeCallConfig;
  }

  async report(patch: CallReport): Promise<void> {
    await this.#api.calls.update(this.#sid, patch as Parameters<Switchboard['calls']['update']>[1]);
  }

  async uploadRecording(wav: Buffer): Promise<void> {
    await this.#api.withOptions({ timeoutMs: REQUEST_TIMEOUT_MS * 4 }).calls.uploadRecording(this.#sid, new Blob([new Uint8Array(wav)]), 'audio/wav');
  }

  async callTool(name: string, args: Record<string, unknown>): Promise<ToolCallResult> {
    return (await this.#api.withOptions({ timeoutMs: TOOL_TIMEOUT_MS }).runtime.callTool(this.#sid, name, args)) as ToolCallResult;
  }

  async searchKnowledge(query: string): Promise<KnowledgeHit[]> {
    const hits = await this.#api.knowledgeBase.search({ query: query.slice(0, 2000), top_k: KNOWLEDGE_TOP_K });
    return (hits as KnowledgeHit[]).slice(0, KNOWLEDGE_TOP_K);
  }
}
