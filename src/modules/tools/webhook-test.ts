import { performance } from 'node:perf_hooks';
import { safeRequest } from '../../adapters/http/safe-request.ts';
import { DestinationRefusedError, type AllowedNetworks } from '../../adapters/http/outbound-addresses.ts';
import { Errors } from '../../core/errors.ts';
import type { ToolParameter, ToolRow } from './repository.ts';

export interface ToolTestResult {
  ok: boolean;
  status_code: number | null;
  latency_ms: number;
  body: string | null;
  truncated: boolean;
  error: string | null;
  request: { method: string; url: string; arguments: Record<string, unknown> };
}

const MAX_BODY = 4096;

function sampleValue(p: ToolParameter): unknown {
  if (p.enum?.length) return p.enum[0];
  switch (p.type) {
    case 'number': return 1.5;
    case 'integer': return 1;
    case 'boolean': return true;
    case 'object': return {};
    case 'array': return [];
    default: return `sample ${p.name}`;
  }
}

/**
 * The request a voice runtime makes when the language model calls the tool: arguments as the
 * query string for GET and DELETE, else a JSON body `{tool_name, arguments}`.
 */
export async function runWebhookTest(tool: ToolRow, given: Record<string, unknown> | undefined, allowedNetworks: AllowedNetworks): Promise<ToolTestResult> {
  const args = given ?? Object.fromEntries(tool.parameters.map((p) => [p.name, sampleValue(p)]));
  const url = new URL(tool.webhookUrl);
  const inQuery = tool.httpMethod === 'GET' || tool.httpMethod === 'DELETE';
  if (inQuery) for (const [k, v] of Object.entries(args)) url.searchParams.set(k, typeof v === 'string' ? v : JSON.stringify(v));
  const body = inQuery ? undefined : JSON.stringify({ tool_name: tool.toolName, arguments: args });
  const headers: Record<string, string> = { 'user-agent': 'Switchboard-Tool-Test/1', ...tool.headers };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const request = { method: tool.httpMethod, url: url.toString(), arguments: args };
  const started = performance.now();
  try {
    const res = await safeRequest(url.toString(), {
      method: tool.httpMethod, headers, body, timeoutMs: tool.timeoutSeconds * 1000, maxBodyBytes: MAX_BODY, allowedNetworks,
    });
    return {
      ok: res.status >= 200 && res.status < 300,
      status_code: res.status,
      latency_ms: Math.round(performance.now() - started),
      body: res.body.toString('utf8'),
      truncated: res.truncated,
      error: null,
      request,
    };
  } catch (err) {
    if (err instanceof DestinationRefusedError) throw Errors.destinationRefused(err.message);
    const message = `request failed: ${(err as Error).message}`;
    return { ok: false, status_code: null, latency_ms: Math.round(performance.now() - started), body: null, truncated: false, error: message, request };
  }
}
