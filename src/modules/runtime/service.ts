import type { Static } from 'typebox';
import type { RequestContext } from '../../core/context.ts';
import { Errors } from '../../core/errors.ts';
import type { AgentService } from '../agents/service.ts';
import type { CallService } from '../calls/service.ts';
import { VOICE_CATEGORIES, type IntegrationService, type VoiceCategory } from '../integrations/service.ts';
import type { ToolParameter, ToolService } from '../tools/service.ts';
import type { RuntimeCall, RuntimeToolResult } from './schemas.ts';

type RuntimeCallView = Static<typeof RuntimeCall>;
type Agent = Awaited<ReturnType<AgentService['get']>>;

/** A tool's parameters as the JSON Schema of a function's arguments, what every language model API takes. */
export function functionParameters(parameters: readonly ToolParameter[]): Record<string, unknown> {
  const properties = Object.fromEntries(parameters.map((p) => [p.name, {
    type: p.type, ...(p.description ? { description: p.description } : {}), ...(p.enum?.length ? { enum: p.enum } : {}),
  }]));
  return { type: 'object', properties, required: parameters.filter((p) => p.required).map((p) => p.name) };
}

/**
 * What a voice runtime reads and calls for one call, with the call's token (extensions.md §10).
 * The auth plugin has already bound the token to the path's call; `ctx.call` says which.
 */
export class RuntimeService {
  readonly #deps: { calls: CallService; agents: AgentService; integrations: IntegrationService; tools: ToolService };
  constructor(deps: { calls: CallService; agents: AgentService; integrations: IntegrationService; tools: ToolService }) {
    this.#deps = deps;
  }

  async callConfiguration(ctx: RequestContext, callSid: string): Promise<RuntimeCallView> {
    const call = await this.#deps.calls.get(ctx, callSid);
    const agent = await this.#agentOf(ctx, call.agent_id, call.agent_version);
    const providers = {} as RuntimeCallView['providers'];
    for (const category of VOICE_CATEGORIES) providers[category] = await this.#provider(ctx.orgId, category, agent);
    const tools = [];
    for (const toolId of agent.tool_ids) {
      const tool = await this.#deps.tools.get(ctx, toolId);
      tools.push({ name: tool.tool_name, description: tool.tool_description, parameters: functionParameters(tool.parameters) });
    }
    return { call, agent, variables: call.variables, providers, tools };
  }

  async callTool(ctx: RequestContext, callSid: string, toolName: string, args: Record<string, unknown>): Promise<Static<typeof RuntimeToolResult>> {
    const call = await this.#deps.calls.get(ctx, callSid);
    const agent = await this.#agentOf(ctx, call.agent_id, call.agent_version);
    return this.#deps.tools.invokeForAgent(ctx.orgId, agent.tool_ids, toolName, args);
  }

  /**
   * The call's agent at the call's version (its tools included: a later edit does not change a call
   * already routed); a token names the agent too, and a call and token that disagree are refused.
   */
  async #agentOf(ctx: RequestContext, agentId: string, version: number | null): Promise<Agent> {
    if (ctx.call && ctx.call.agentId !== agentId) throw Errors.scopeMissing("another agent's configuration");
    return this.#deps.agents.getAtVersion(ctx, agentId, version);
  }

  async #provider(orgId: string, category: VoiceCategory, agent: Agent): Promise<RuntimeCallView['providers'][VoiceCategory]> {
    const setting = { stt: agent.stt_provider, tts: agent.tts_provider, llm: agent.llm_provider }[category];
    const chosen = await this.#deps.integrations.forAgentProvider(orgId, category, setting, agent[`${category}_integration_id`]);
    if (!chosen) return null;
    const model = { stt: agent.stt_model, tts: agent.tts_model, llm: agent.llm_model }[category];
    return {
      provider: setting, model, ...(category === 'tts' ? { voice_id: agent.voice_id } : {}),
      integration_id: chosen.integration.id, credentials: chosen.credentials,
    };
  }
}
