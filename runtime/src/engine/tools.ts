/**
 * The functions the LLM is offered: the agent's webhook tools (run by the platform) and the built-ins
 * of extensions.md §10. A tool never ends the call by failing: its error goes back to the LLM as the
 * result, so the agent can say something sensible.
 */
import { performance } from 'node:perf_hooks';
import type { ToolFunction } from '../providers/types.ts';
import type { CallPlatform, EndReason, RuntimeCallConfig, ToolRecord } from '../platform/call-platform.ts';

export const END_CALL = 'end_call';
export const TRANSFER_CALL = 'transfer_call';
export const SEARCH_KNOWLEDGE_BASE = 'search_knowledge_base';

export function offeredTools(config: RuntimeCallConfig): ToolFunction[] {
  const { agent } = config;
  const builtIns = new Set([END_CALL, TRANSFER_CALL, SEARCH_KNOWLEDGE_BASE]);
  const tools = config.tools.filter((tool) => !builtIns.has(tool.name));
  if (agent.end_call_enabled !== false) {
    tools.push({
      name: END_CALL,
      description: 'Hang up the call once the conversation is complete or the caller says goodbye. Say goodbye first.',
      parameters: { type: 'object', properties: { reason: { type: 'string', description: 'Why the call ends' } } },
    });
  }
  if (agent.transfer_number) {
    tools.push({
      name: TRANSFER_CALL,
      description: 'Transfer the caller to a human colleague when they ask for a person or you cannot help. Tell them first.',
      parameters: { type: 'object', properties: { reason: { type: 'string', description: 'Why the caller is transferred' } } },
    });
  }
  if ((agent.documentation_ids ?? []).length > 0) {
    tools.push({
      name: SEARCH_KNOWLEDGE_BASE,
      description: "Search the organization's knowledge base for facts to answer the caller's question.",
      parameters: { type: 'object', properties: { query: { type: 'string', description: 'What to look up' } }, required: ['query'] },
    });
  }
  return tools;
}

export interface ToolOutcome {
  record: ToolRecord;
  /** What the LLM gets back, as text. */
  content: string;
  /** A built-in that ends the call once the agent finished speaking. */
  endsCall: EndReason | null;
}

export async function runTool(platform: CallPlatform, name: string, args: Record<string, unknown>): Promise<ToolOutcome> {
  const started = performance.now();
  const record = (result: unknown, status: ToolRecord['status'], duration = Math.round(performance.now() - started)): ToolRecord =>
    ({ name, arguments: args, result, status, duration_ms: duration });
  if (name === END_CALL) {
    return { record: record({ ended: true }, 200), content: 'The call will end after your last sentence.', endsCall: 'tool_end_call' };
  }
  if (name === TRANSFER_CALL) {
    return { record: record({ transferred: true }, 200), content: 'The caller is being transferred.', endsCall: 'transferred' };
  }
  try {
    if (name === SEARCH_KNOWLEDGE_BASE) {
      const hits = await platform.searchKnowledge(String(args.query ?? ''));
      const result = hits.map((hit) => ({ text: hit.text, documentation_id: hit.documentation_id, page: hit.page, score: hit.score }));
      return { record: record(result, 200), content: JSON.stringify(result), endsCall: null };
    }
    const answer = await platform.callTool(name, args);
    return {
      record: record(answer.body, answer.status, answer.duration_ms),
      content: JSON.stringify({ status: answer.status, body: answer.body }),
      endsCall: null,
    };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { record: record({ error: message }, null), content: JSON.stringify({ error: message }), endsCall: null };
  }
}
