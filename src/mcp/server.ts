import http from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { Switchboard } from '@switchboard/sdk';
import { hasPermission, isRole } from '../core/permissions.ts';
import { TOOLS } from './tools.ts';
import { allowedHostNames, generateMcpToken, isLoopbackHost, refusal } from './http-guard.ts';

export interface McpOptions {
  url: string;
  apiKey: string;
  organizationId: string;
}

/**
 * `switchboard mcp`: a Model Context Protocol server acting with one API key through the public API.
 * It offers only the tools the key may use: its role holds the permission and, for a key narrowed by
 * scopes, the scopes list it (the API refuses the rest anyway; a tool that always fails misleads a model).
 */
export async function createMcpServer(options: McpOptions): Promise<{ server: McpServer; tools: string[] }> {
  const sb = new Switchboard({ baseUrl: options.url, apiKey: options.apiKey, organizationId: options.organizationId });
  const me = await sb.me();
  const role = me.api_key?.role;
  if (!role || !isRole(role) || me.api_key?.client_id !== options.organizationId) {
    throw new Error('The API key does not belong to this organization');
  }
  const scopes = me.api_key?.scopes ?? [];
  const server = new McpServer({ name: 'switchboard', version: '0.1.0' });
  const allowed = TOOLS.filter((tool) => hasPermission(role, tool.permission) && (scopes.length === 0 || scopes.includes(tool.permission)));
  for (const tool of allowed) tool.register(server, sb);
  return { server, tools: allowed.map((t) => t.permission) };
}

/** Serves MCP over stdin and stdout until stdin closes. */
export async function serveStdio(options: McpOptions): Promise<void> {
  const { server } = await createMcpServer(options);
  await server.connect(new StdioServerTransport());
}

export interface McpHttpOptions extends McpOptions {
  port: number;
  host: string;
  /** MCP_TOKEN; absent: one is generated (and only a loopback address may be listened on). */
  token: string | undefined;
  /** Host names, besides loopback's and the listening address, that `Host` and `Origin` may name. */
  allowedHosts: readonly string[];
}

const sendError = (res: http.ServerResponse, status: number, body: { detail: string; code: string }, headers: Record<string, string> = {}) =>
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));

/**
 * Serves MCP over Streamable HTTP at `POST /mcp`, stateless: each request gets a server of its own
 * (tools are cheap to register; the key is looked up per request). Every request passes the Host,
 * Origin and bearer-token checks of `http-guard.ts` first.
 */
export async function serveHttp(options: McpHttpOptions): Promise<{ server: http.Server; token: string; generated: boolean }> {
  if (!options.token && !isLoopbackHost(options.host)) {
    throw new Error(`Refusing to listen on ${options.host} without MCP_TOKEN: beyond loopback, set a token of your own (openssl rand -base64 32)`);
  }
  const token = options.token ?? generateMcpToken();
  const allowed = allowedHostNames(options.host, options.allowedHosts);
  await createMcpServer(options); // fail at start, not at the first request, when the key is refused
  const httpServer = http.createServer((req, res) => {
    if (req.url !== '/mcp') {
      sendError(res, 404, { detail: 'MCP is served at /mcp', code: 'route_not_found' });
      return;
    }
    const refused = refusal(req, allowed, token);
    if (refused) {
      sendError(res, refused.status, { detail: refused.detail, code: refused.code }, refused.status === 401 ? { 'www-authenticate': 'Bearer' } : {});
      return;
    }
    void (async () => {
      try {
        const { server } = await createMcpServer(options);
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
        res.on('close', () => { void transport.close(); void server.close(); });
        await server.connect(transport);
        await transport.handleRequest(req, res);
      } catch (err) {
        if (!res.headersSent) sendError(res, 500, { detail: String((err as Error).message), code: 'internal_error' });
      }
    })();
  });
  await new Promise<void>((resolve) => httpServer.listen(options.port, options.host, resolve));
  return { server: httpServer, token, generated: !options.token };
}
