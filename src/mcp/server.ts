import http from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { Switchboard } from '@switchboard/sdk';
import { hasPermission, isRole } from '../core/permissions.ts';
import { TOOLS } from './tools.ts';

export interface McpOptions {
  url: string;
  apiKey: string;
  organizationId: string;
}

/**
 * `switchboard mcp`: a Model Context Protocol server acting with one API key through the public API.
 * It offers only the tools the key's role may use (the API refuses the rest anyway).
 */
export async function createMcpServer(options: McpOptions): Promise<{ server: McpServer; tools: string[] }> {
  const sb = new Switchboard({ baseUrl: options.url, apiKey: options.apiKey, organizationId: options.organizationId });
  const me = await sb.me();
  const role = me.api_key?.role;
  if (!role || !isRole(role) || me.api_key?.client_id !== options.organizationId) {
    throw new Error('The API key does not belong to this organization');
  }
  const server = new McpServer({ name: 'switchboard', version: '0.1.0' });
  const allowed = TOOLS.filter((tool) => hasPermission(role, tool.permission));
  for (const tool of allowed) tool.register(server, sb);
  return { server, tools: allowed.map((t) => t.permission) };
}

/** Serves MCP over stdin and stdout until stdin closes. */
export async function serveStdio(options: McpOptions): Promise<void> {
  const { server } = await createMcpServer(options);
  await server.connect(new StdioServerTransport());
}

/**
 * Serves MCP over Streamable HTTP at `POST /mcp`, stateless: each request gets a server of its own
 * (tools are cheap to register; the role is looked up once).
 */
export async function serveHttp(options: McpOptions & { port: number; host: string }): Promise<http.Server> {
  await createMcpServer(options); // fail at start, not at the first request, when the key is refused
  const httpServer = http.createServer((req, res) => {
    if (req.url !== '/mcp') {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ detail: 'MCP is served at /mcp', code: 'route_not_found' }));
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
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ detail: String((err as Error).message), code: 'internal_error' }));
      }
    })();
  });
  await new Promise<void>((resolve) => httpServer.listen(options.port, options.host, resolve));
  return httpServer;
}
