import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import type { Switchboard } from '@switchboard/sdk';
import { CALL_STATUSES } from '../core/call-enums.ts';

/** What a tool answers: the API's data, as JSON text the model reads. */
const json = (data: unknown) => ({ content: [{ type: 'text' as const, text: JSON.stringify(data, null, 2) }] });

async function take<T>(items: AsyncIterable<T>, limit: number): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) {
    out.push(item);
    if (out.length >= limit) break;
  }
  return out;
}


/** One tool: the permission its API route needs, and how to register it. */
interface ToolDefinition {
  permission: string;
  register(server: McpServer, sb: Switchboard): void;
}

export const TOOLS: ToolDefinition[] = [
  {
    permission: 'calls:read',
    register: (server, sb) => server.registerTool('list_calls', {
      title: 'List calls',
      description: 'Calls of the organization, newest first, with their status, duration and cost. Filter by agent, status and creation time.',
      inputSchema: {
        agent_id: z.string().optional(), status: z.enum(CALL_STATUSES).optional(),
        from: z.string().optional().describe('Created at or after (ISO 8601 date or date-time)'), to: z.string().optional(),
        limit: z.number().int().min(1).max(200).default(20),
      },
      annotations: { readOnlyHint: true },
    }, async ({ limit, ...filters }) => json(await take(sb.calls.list({ ...filters, limit: Math.min(limit, 100) }), limit))),
  },
  {
    permission: 'calls:read',
    register: (server, sb) => server.registerTool('get_call', {
      title: 'Get a call', description: 'One call with its transcript, cost breakdown and recording details.',
      inputSchema: { call_sid: z.string() }, annotations: { readOnlyHint: true },
    }, async ({ call_sid }) => json(await sb.calls.get(call_sid))),
  },
  {
    permission: 'kb:read',
    register: (server, sb) => server.registerTool('search_knowledge_base', {
      title: 'Search the knowledge base', description: "The passages of the organization's documents nearest the query (or of one agent's).",
      inputSchema: { query: z.string().min(1), agent_id: z.string().optional(), top_k: z.number().int().min(1).max(50).default(5) },
      annotations: { readOnlyHint: true },
    }, async (input) => json(await sb.knowledgeBase.search(input))),
  },
  {
    permission: 'analytics:read',
    register: (server, sb) => server.registerTool('get_call_analytics', {
      title: 'Call analytics', description: 'Calls, cost and duration per day (start_date/end_date, YYYY-MM-DD) or per minute (start_time/end_time, ISO 8601), zero-filled.',
      inputSchema: {
        start_date: z.string().optional(), end_date: z.string().optional(), start_time: z.string().optional(), end_time: z.string().optional(),
        agent_id: z.string().optional(), timezone: z.string().default('UTC'),
      },
      annotations: { readOnlyHint: true },
    }, async (query) => json(await sb.analytics.daily(query))),
  },
  {
    permission: 'agents:read',
    register: (server, sb) => server.registerTool('list_agents', {
      title: 'List agents', description: 'The voice agents of the organization.', inputSchema: {}, annotations: { readOnlyHint: true },
    }, async () => json(await take(sb.agents.list(), 500))),
  },
  {
    permission: 'agents:read',
    register: (server, sb) => server.registerTool('get_agent', {
      title: 'Get an agent', description: 'One agent with its prompt, providers, tools, documents and numbers.',
      inputSchema: { agent_id: z.string() }, annotations: { readOnlyHint: true },
    }, async ({ agent_id }) => json(await sb.agents.get(agent_id))),
  },
  {
    permission: 'agents:update',
    register: (server, sb) => server.registerTool('update_agent', {
      title: 'Update an agent', description: "Changes an agent's name, prompt, first message, language, model or recording; only the fields given.",
      inputSchema: {
        agent_id: z.string(), agent_name: z.string().min(1).max(100).optional(), system_prompt: z.string().max(20000).optional(),
        first_message: z.string().max(1000).nullable().optional(), language: z.string().optional(), llm_model: z.string().optional(),
        temperature: z.number().min(0).max(2).optional(), recording_enabled: z.boolean().optional(),
      },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
    }, async ({ agent_id, ...changes }) => json(await sb.agents.update(agent_id, changes))),
  },
  {
    permission: 'agents:read',
    register: (server, sb) => server.registerTool('list_agent_versions', {
      title: "List an agent's versions",
      description: 'Every saved version of an agent, newest first: its number, who made it and when, and its settings. With `against`, also what changed between `version` and `against`.',
      inputSchema: {
        agent_id: z.string(), limit: z.number().int().min(1).max(200).default(20),
        version: z.number().int().min(1).optional(), against: z.number().int().min(1).optional().describe('Compare `version` with this version'),
      },
      annotations: { readOnlyHint: true },
    }, async ({ agent_id, limit, version, against }) => {
      if (version !== undefined && against !== undefined) return json(await sb.agents.diffVersions(agent_id, version, against));
      return json(await take(sb.agents.versions(agent_id, { page_size: Math.min(limit, 100) }), limit));
    }),
  },
  {
    permission: 'agents:update',
    register: (server, sb) => server.registerTool('restore_agent_version', {
      title: 'Restore an agent version',
      description: "Makes a new version of the agent with an earlier version's settings; calls use it from then on. The versions in between are kept.",
      inputSchema: { agent_id: z.string(), version: z.number().int().min(1) },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
    }, async ({ agent_id, version }) => json(await sb.agents.restoreVersion(agent_id, version))),
  },
  {
    permission: 'calls:read',
    register: (server, sb) => server.registerTool('get_call_analysis', {
      title: "Get a call's analysis",
      description: 'The post-call analysis of one call: summary, whether it succeeded and why, sentiment, the structured data extracted, and its status (pending, completed, failed).',
      inputSchema: { call_sid: z.string() }, annotations: { readOnlyHint: true },
    }, async ({ call_sid }) => {
      const call = await sb.calls.get(call_sid);
      return json({ call_sid: call.call_sid, agent_id: call.agent_id, agent_version: call.agent_version ?? null, analysis: call.analysis ?? null });
    }),
  },
  {
    permission: 'phone_numbers:read',
    register: (server, sb) => server.registerTool('list_phone_numbers', {
      title: 'List phone numbers', description: 'The phone numbers of the organization and the agents that answer them.',
      inputSchema: {}, annotations: { readOnlyHint: true },
    }, async () => json(await take(sb.phoneNumbers.list(), 500))),
  },
];
