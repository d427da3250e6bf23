import type { Static } from 'typebox';
import type { Db, Executor } from '../../db/database.ts';
import type { RequestContext } from '../../core/context.ts';
import type { EventOutbox } from '../events/service.ts';
import { VOICE_CATEGORIES, type IntegrationService, type VoiceCategory } from '../integrations/service.ts';
import type { AuditChange, AuditService } from '../audit/service.ts';
import { pageNewestFirst, type Page } from '../../core/cursor.ts';
import { Errors } from '../../core/errors.ts';
import { newId } from '../../core/ids.ts';
import { iso } from '../../core/schemas.ts';
import { AgentRepository, type LinkKind, type AgentRow, type NewAgentRow } from './repository.ts';
import type { Agent, AgentSummary, CreateAgentBody, UpdateAgentBody } from './schemas.ts';

// The full agent's schema, for the modules that answer it (the voice runtime's call configuration).
export { Agent as AgentSchema } from './schemas.ts';

type AgentSummaryView = Static<typeof AgentSummary>;
type AgentView = Static<typeof Agent>;
type CreateInput = Static<typeof CreateAgentBody>;
type UpdateInput = Static<typeof UpdateAgentBody>;
/** The provider settings and the integrations named for them, as the checks read them. */
type AgentRowProviders = Record<`${VoiceCategory}_provider`, string> & Partial<Record<`${VoiceCategory}_integration_id`, string | null>>;

export function toAgentSummary(row: AgentRow): AgentSummaryView {
  return {
    agent_id: row.id,
    agent_name: row.agentName,
    language: row.language,
    stt_provider: row.sttProvider,
    tts_provider: row.ttsProvider,
    llm_provider: row.llmProvider,
    llm_model: row.llmModel,
    recording_enabled: row.recordingEnabled,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

/** Maps the API's field names onto columns; only the fields given are present. */
function columns(input: Partial<CreateInput>): Partial<NewAgentRow> {
  const out: Partial<NewAgentRow> = {};
  if (input.agent_name !== undefined) out.agentName = input.agent_name;
  if (input.language !== undefined) out.language = input.language.toUpperCase();
  if (input.stt_provider !== undefined) out.sttProvider = input.stt_provider;
  if (input.stt_model !== undefined) out.sttModel = input.stt_model;
  if (input.tts_provider !== undefined) out.ttsProvider = input.tts_provider;
  if (input.tts_model !== undefined) out.ttsModel = input.tts_model;
  if (input.voice_id !== undefined) out.voiceId = input.voice_id;
  if (input.llm_provider !== undefined) out.llmProvider = input.llm_provider;
  if (input.llm_model !== undefined) out.llmModel = input.llm_model;
  if (input.system_prompt !== undefined) out.systemPrompt = input.system_prompt;
  if (input.first_message !== undefined) out.firstMessage = input.first_message;
  if (input.temperature !== undefined) out.temperature = input.temperature;
  if (input.max_call_duration_seconds !== undefined) out.maxCallDurationSeconds = input.max_call_duration_seconds;
  if (input.recording_enabled !== undefined) out.recordingEnabled = input.recording_enabled;
  if (input.stt_integration_id !== undefined) out.sttIntegrationId = input.stt_integration_id;
  if (input.tts_integration_id !== undefined) out.ttsIntegrationId = input.tts_integration_id;
  if (input.llm_integration_id !== undefined) out.llmIntegrationId = input.llm_integration_id;
  if (input.interruptible !== undefined) out.interruptible = input.interruptible;
  if (input.end_call_enabled !== undefined) out.endCallEnabled = input.end_call_enabled;
  if (input.transfer_number !== undefined) out.transferNumber = input.transfer_number;
  if (input.silence_timeout_seconds !== undefined) out.silenceTimeoutSeconds = input.silence_timeout_seconds;
  return out;
}

export interface AgentDeps {
  db: Db;
  /** agent.created / updated / deleted, in the change's transaction. */
  outbox: EventOutbox;
  /** agent.create / update / delete entries, in the same transaction. */
  audit: Pick<AuditService, 'record'>;
  /** Checks that an agent's *_integration_id can serve its provider setting. */
  integrations: Pick<IntegrationService, 'checkServesAgent'>;
}

const audited = (action: string, agentId: string, input: object): AuditChange =>
  ({ action, resourceType: 'agent', resourceId: agentId, changedFields: Object.keys(input) });

export class AgentService {
  readonly #db: Db;
  readonly #outbox: EventOutbox;
  readonly #audit: Pick<AuditService, 'record'>;
  readonly #integrations: AgentDeps['integrations'];
  constructor(deps: AgentDeps) {
    this.#db = deps.db;
    this.#integrations = deps.integrations;
    this.#outbox = deps.outbox;
    this.#audit = deps.audit;
  }

  /**
   * The agent, for other modules (calls, phone numbers, knowledge base); 404 when the organization
   * has no such agent. `within` runs it in the caller's transaction, `lock` holds the row to its end
   * (an assignment then cannot slip past a concurrent delete).
   */
  async requireAgent(orgId: string, agentId: string, options: { within?: Executor; lock?: boolean } = {}): Promise<AgentRow> {
    const row = await new AgentRepository(options.within ?? this.#db).findById(orgId, agentId, { forUpdate: options.lock });
    if (!row) throw Errors.notFound('Agent');
    return row;
  }

  async create(ctx: RequestContext, input: CreateInput): Promise<AgentView> {
    return this.#db.transaction(async (tx) => {
      const repo = new AgentRepository(tx);
      const toolIds = await this.#checkLinks(repo, 'tools', ctx.orgId, input.tool_ids);
      const documentIds = await this.#checkLinks(repo, 'documents', ctx.orgId, input.documentation_ids);
      await this.#checkIntegrations(tx, ctx.orgId, input as AgentRowProviders);
      // Defaults come from the body schema; the casts only tell TypeScript they were applied.
      const row = await repo.insert(ctx.orgId, { ...(columns(input) as NewAgentRow), id: newId('agent') });
      if (toolIds?.length) await repo.replaceLinks('tools', ctx.orgId, row.id, toolIds);
      if (documentIds?.length) await repo.replaceLinks('documents', ctx.orgId, row.id, documentIds);
      const agent = await this.#full(tx, row);
      await this.#audit.record(tx, ctx, audited('agent.create', row.id, input));
      await this.#outbox.emit(tx, ctx.orgId, 'agent.created', agent);
      return agent;
    });
  }

  async list(ctx: RequestContext, query: { page_size: number; cursor?: string }): Promise<Page<AgentSummaryView>> {
    return pageNewestFirst(new AgentRepository(this.#db), ctx.orgId, query, toAgentSummary);
  }

  async get(ctx: RequestContext, agentId: string): Promise<AgentView> {
    const row = await new AgentRepository(this.#db).findById(ctx.orgId, agentId);
    if (!row) throw Errors.notFound('Agent');
    return this.#full(this.#db, row);
  }

  async update(ctx: RequestContext, agentId: string, input: UpdateInput): Promise<AgentView> {
    return this.#db.transaction(async (tx) => {
      const repo = new AgentRepository(tx);
      const current = await repo.findById(ctx.orgId, agentId, { forUpdate: true });
      if (!current) throw Errors.notFound('Agent');
      const toolIds = await this.#checkLinks(repo, 'tools', ctx.orgId, input.tool_ids);
      const documentIds = await this.#checkLinks(repo, 'documents', ctx.orgId, input.documentation_ids);
      // A provider changed under a named integration is checked too: the pair must still fit.
      await this.#checkIntegrations(tx, ctx.orgId, {
        stt_provider: input.stt_provider ?? current.sttProvider, tts_provider: input.tts_provider ?? current.ttsProvider, llm_provider: input.llm_provider ?? current.llmProvider,
        stt_integration_id: input.stt_integration_id === undefined ? current.sttIntegrationId : input.stt_integration_id,
        tts_integration_id: input.tts_integration_id === undefined ? current.ttsIntegrationId : input.tts_integration_id,
        llm_integration_id: input.llm_integration_id === undefined ? current.llmIntegrationId : input.llm_integration_id,
      });
      const row = (await repo.update(ctx.orgId, agentId, columns(input)))!;
      if (toolIds) await repo.replaceLinks('tools', ctx.orgId, agentId, toolIds);
      if (documentIds) await repo.replaceLinks('documents', ctx.orgId, agentId, documentIds);
      const agent = await this.#full(tx, row);
      await this.#audit.record(tx, ctx, audited('agent.update', agentId, input));
      await this.#outbox.emit(tx, ctx.orgId, 'agent.updated', agent);
      return agent;
    });
  }

  /** Refused while phone numbers are assigned to the agent: they must be unassigned first. */
  async delete(ctx: RequestContext, agentId: string): Promise<void> {
    await this.#db.transaction(async (tx) => {
      const repo = new AgentRepository(tx);
      // The lock makes a concurrent assignment wait for this delete (and then find no agent).
      if (!(await repo.findById(ctx.orgId, agentId, { forUpdate: true }))) throw Errors.notFound('Agent');
      const numbers = await repo.phoneNumberIds(ctx.orgId, agentId);
      if (numbers.length) {
        throw Errors.conflict('agent_has_phone_numbers', `The agent has ${numbers.length} assigned phone number(s); unassign them first`);
      }
      await repo.delete(ctx.orgId, agentId);
      await this.#audit.record(tx, ctx, audited('agent.delete', agentId, {}));
      await this.#outbox.emit(tx, ctx.orgId, 'agent.deleted', { agent_id: agentId });
    });
  }

  async #checkIntegrations(tx: Executor, orgId: string, agent: AgentRowProviders): Promise<void> {
    for (const category of VOICE_CATEGORIES) {
      const id = agent[`${category}_integration_id`];
      if (id) await this.#integrations.checkServesAgent(tx, orgId, category, agent[`${category}_provider`], id);
    }
  }

  /** The ids as given (undefined when not given), once each is known to exist in the organization. */
  async #checkLinks(repo: AgentRepository, kind: LinkKind, orgId: string, ids: string[] | undefined): Promise<string[] | undefined> {
    if (!ids?.length) return ids;
    const found = new Set(await repo.existingIds(kind, orgId, ids));
    const missing = ids.find((id) => !found.has(id));
    if (missing) throw Errors.notFound(`${kind === 'tools' ? 'Tool' : 'Document'} ${missing}`);
    return ids;
  }

  async #full(db: Executor, row: AgentRow): Promise<AgentView> {
    const repo = new AgentRepository(db);
    // One after another: `db` may be a transaction's single client, which must not run queries concurrently.
    const toolIds = await repo.linkedIds('tools', row.clientId, row.id);
    const documentIds = await repo.linkedIds('documents', row.clientId, row.id);
    const phoneNumberIds = await repo.phoneNumberIds(row.clientId, row.id);
    return {
      ...toAgentSummary(row),
      client_id: row.clientId,
      stt_model: row.sttModel,
      tts_model: row.ttsModel,
      voice_id: row.voiceId,
      system_prompt: row.systemPrompt,
      first_message: row.firstMessage,
      temperature: row.temperature,
      max_call_duration_seconds: row.maxCallDurationSeconds,
      tool_ids: toolIds,
      documentation_ids: documentIds,
      phone_number_ids: phoneNumberIds,
      stt_integration_id: row.sttIntegrationId,
      tts_integration_id: row.ttsIntegrationId,
      llm_integration_id: row.llmIntegrationId,
      interruptible: row.interruptible,
      end_call_enabled: row.endCallEnabled,
      transfer_number: row.transferNumber,
      silence_timeout_seconds: row.silenceTimeoutSeconds,
    };
  }
}
