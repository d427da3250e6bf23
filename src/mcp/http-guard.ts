import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type http from 'node:http';
import net from 'node:net';

/**
 * Who may talk to `switchboard mcp --http`. The server acts with the operator's API key, so any process
 * on the machine, or a web page that rebinds its DNS name to 127.0.0.1, could otherwise read transcripts
 * and change agents. Every request needs:
 * - a `Host` whose name is on the allow-list (DNS-rebinding protection: a rebound page still sends its
 *   own name), and an `Origin`, when there is one, whose host name is on it too (the MCP Streamable HTTP
 *   transport specification: "Servers MUST validate the Origin header", 403 when invalid);
 * - `Authorization: Bearer <token>`: MCP_TOKEN, or one generated at start and printed once.
 * Names are compared without the port, as the SDK's own `hostHeaderValidation` does; the SDK's transport
 * options compare `host:port` strings exactly, which a proxy or the default port would defeat.
 */

export const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'] as const;

/** Whether listening on `host` keeps the server to this machine (0.0.0.0 and :: listen everywhere). */
export function isLoopbackHost(host: string): boolean {
  if (host === 'localhost') return true;
  const bare = host.replace(/^\[|\]$/g, '');
  if (net.isIPv4(bare)) return bare.startsWith('127.');
  return bare === '::1' || /^::ffff:127\./i.test(bare);
}

/** The host names accepted in `Host` and `Origin`: loopback's, the listening address's, and any the operator names. */
export function allowedHostNames(listenHost: string, extra: readonly string[]): Set<string> {
  const names = new Set<string>(LOOPBACK_NAMES);
  const asName = (host: string) => (net.isIPv6(host) ? `[${host}]` : host).toLowerCase();
  if (listenHost !== '0.0.0.0' && listenHost !== '::') names.add(asName(listenHost));
  for (const name of extra) names.add(asName(name));
  return names;
}

export function generateMcpToken(): string {
  return randomBytes(32).toString('base64url');
}

const digest = (text: string) => createHash('sha256').update(text).digest();

export interface Refusal {
  status: 401 | 403;
  code: string;
  detail: string;
}

function hostNameOf(hostHeader: string): string | undefined {
  try {
    return new URL(`http://${hostHeader}`).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

/** Why this request is refused, or undefined when it may reach the MCP transport. */
export function refusal(req: http.IncomingMessage, allowed: ReadonlySet<string>, token: string): Refusal | undefined {
  const host = req.headers.host;
  if (!host || !allowed.has(hostNameOf(host) ?? '')) {
    return { status: 403, code: 'host_not_allowed', detail: `Host ${JSON.stringify(host ?? '')} is not one this MCP server answers to` };
  }
  const origin = req.headers.origin;
  if (origin !== undefined) {
    let originHost: string | undefined;
    try {
      const parsed = new URL(origin);
      if (parsed.protocol === 'http:' || parsed.protocol === 'https:') originHost = parsed.hostname.toLowerCase();
    } catch {
      // "null" (a sandboxed page, a file) and anything unparsable: refused below
    }
    if (!originHost || !allowed.has(originHost)) {
      return { status: 403, code: 'origin_not_allowed', detail: `Origin ${JSON.stringify(origin)} may not use this MCP server` };
    }
  }
  const match = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
  // Compared as digests of equal length, in constant time.
  if (!match || !timingSafeEqual(digest(match[1]!), digest(token))) {
    return { status: 401, code: 'unauthenticated', detail: 'Send Authorization: Bearer <MCP token> (MCP_TOKEN, or the token printed at start)' };
  }
  return undefined;
}
