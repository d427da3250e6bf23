import type { Static } from 'typebox';
import type { Db, Executor } from '../../db/database.ts';
import type { RequestContext } from '../../core/context.ts';
import type { EventOutbox } from '../../platform/outbox.ts';
import { VOICE_CATEGORIES, type IntegrationService, type VoiceCategory } from '../integrations/service.ts';
import type { AuditService } from '../audit/service.ts';
import { decodeIntegerCursor, pageNewestFirst, toPage, type Page } from '../../core/cursor.ts';
import { AppError, Errors } from '../../core/errors.ts';
import { newId } from '../../core/ids.ts';
import { iso } from '../../core/schemas.ts';
import { AgentRepository, type LinkKind, type AgentRow, type NewAgentRow, type TrafficSplit } from './repository.ts';
import { VERSIONED_FIELDS, type Agent, type AgentSummary, type AgentVersion, type CreateAgentBody, type UpdateAgentBody } from './schemas.ts';
import { checkAnalysisSettings, type AnalysisSettings } from './analysis-settings.ts';

export type AnalysisSettingsValue = Static<typeof AnalysisSettings>;
/** An agent version's post-call analysis settings and the LLM it would otherwise ask. */
export interface AgentAnalysisConfig {
  version: number;
  analysis: AnalysisSettingsValue | null;
  llmProvider: string;
  llmModel: string | null;
  llmIntegrationId: string | null;
}
import { checkTraffic, configOf, diffConfigs, pickVersion } from './versions.ts';
import { AgentVersionRepository, type AgentVersionRow } from './versions-repository.ts';
import { columns, toAgent, toAgentSummary } from './views.ts';
import { transaction } from '../../db/unit-of-work.ts';

// The full agent's schema, for the modules that answer it (the voice runtime's call configuration).
export { Agent as AgentSchema } from './schemas.ts';

type AgentSummaryView = Static<typeof AgentSummary>;
type AgentView = Static<typeof Agent>;
type AgentVersionView = Static<typeof AgentVersion>;
type CreateInput = Static<typeof CreateAgentBody>;
type UpdateInput = Static<typeof UpdateAgentBody>;
type ConfigInput = Omit<UpdateInput, 'traffic'>;
/** The provider settings and the integrations named for them, as the checks read them. */
type AgentRowProviders = Record<`${VoiceCategory}_provider`, string> & Partial<Record<`${VoiceCategory}_integration_id`, string | null>>;

export interface AgentDeps {
  db: Db;
  /** agent.created / updated / deleted, in the change's transaction. */
  outbox: EventOutbox;
  /** agent.create / update / restore / delete entries, in the same transaction. */
  audit: Pick<AuditService, 'record'>;
  /** Checks that an agent's *_integration_id can serve its provider setting. */
  integrations: Pick<IntegrationService, 'checkServesAgent'>;
}

const toVersionView = (row: AgentVersionRow): AgentVersionView => ({
  agent_id: row.agentId, version: row.version, config: row.config as AgentVersionView['config'], created_at: iso(row.createdAt), created_by: row.createdBy,
});
/** Who made a version: the user (an API key acts for its creator). */
const authorOf = (ctx: RequestContext) => (ctx.actor.type === 'runtime' ? null : ctx.actor.userId);

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

  /**
   * The version a new call of the agent runs (extensions.md §12): the one place every path that
   * creates a call asks. `callerKey` is the caller's number (the callee's for an outbound call), or
   * the call's sid when there is none; read in the transaction that inserts the call.
   */
  async versionForCall(within: Executor, orgId: string, agentId: string, callerKey: string): Promise<number> {
    return pickVersion(await this.requireAgent(orgId, agentId, { within }), callerKey);
  }

  /**
   * What a post-call analysis needs of an agent at a version (extensions.md §13): the version's
   * `analysis` and LLM settings (the latest version when null). Undefined when the agent or that
   * version no longer exists. `within`: the caller's transaction (a call's end), or the database.
   */
  async analysisAtVersion(within: Executor, orgId: string, agentId: string, version: number | null): Promise<AgentAnalysisConfig | undefined> {
    const row = await new AgentRepository(within).findById(orgId, agentId);
    if (!row) return undefined;
    const current = { version: row.version, analysis: (row.analysis ?? null) as AnalysisSettingsValue | null, llmProvider: row.llmProvider, llmModel: row.llmModel, llmIntegrationId: row.llmIntegrationId };
    if (version === null || version === row.version) return current;
    const kept = await new AgentVersionRepository(within).find(orgId, agentId, version);
    if (!kept) return undefined;
    const config = kept.config as Partial<AgentView>;
    return {
      version, analysis: (config.analysis ?? null) as AnalysisSettingsValue | null, llmProvider: config.llm_provider ?? row.llmProvider,
      llmModel: config.llm_model === undefined ? row.llmModel : config.llm_model, llmIntegrationId: config.llm_integration_id === undefined ? row.llmIntegrationId : config.llm_integration_id,
    };
  }

  async create(ctx: RequestContext, input: CreateInput): Promise<AgentView> {
    return transaction(this.#db, async (tx) => {
      const repo = new AgentRepository(tx);
      checkAnalysisSettings(input.analysis);
      const toolIds = await this.#checkLinks(repo, 'tools', ctx.orgId, input.tool_ids);
      const documentIds = await this.#checkLinks(repo, 'documents', ctx.orgId, input.documentation_ids);
      await this.#checkIntegrations(tx, ctx.orgId, input as AgentRowProviders);
      // Defaults come from the body schema; the casts only tell TypeScript they were applied.
      const row = await repo.insert(ctx.orgId, { ...(columns(input) as NewAgentRow), id: newId('agent'), version: 1 });
      if (toolIds?.length) await repo.replaceLinks('tools', ctx.orgId, row.id, toolIds);
      if (documentIds?.length) await repo.replaceLinks('documents', ctx.orgId, row.id, documentIds);
      // A new agent links to what it was just given and to no phone number yet: nothing to read back
      // unless links were made (their order is the database's, oldest first, ties by id).
      const agent = toolIds?.length || documentIds?.length ? await this.#full(tx, row) : toAgent(row, { toolIds: [], documentIds: [], phoneNumberIds: [] });
      await this.#keepVersion(tx, ctx, agent);
      await this.#audit.record(tx, ctx, { action: 'agent.create', resourceType: 'agent', resourceId: row.id, changedFields: Object.keys(input) });
      await this.#outbox.emit(tx, ctx.orgId, 'agent.created', agent);
      return agent;
    });
  }

  async list(ctx: RequestContext, query: { page_size: number; cursor?: string }): Promise<Page<AgentSummaryView>> {
    return pageNewestFirst(new AgentRepository(this.#db), ctx.orgId, query, toAgentSummary);
  }

  async get(ctx: RequestContext, agentId: string): Promise<AgentView> {
    return this.#full(this.#db, await this.requireAgent(ctx.orgId, agentId));
  }

  /**
   * The agent as a call runs it: the configuration of `version` (the latest when null) over the
   * agent's other fields, with `version` saying which.
   */
  async getAtVersion(ctx: RequestContext, agentId: string, version: number | null): Promise<AgentView> {
    const agent = await this.get(ctx, agentId);
    if (version === null || version === agent.version) return agent;
    const kept = await new AgentVersionRepository(this.#db).find(ctx.orgId, agentId, version);
    if (!kept) throw Errors.notFound(`Agent version ${version}`);
    return { ...agent, ...(kept.config as Partial<AgentView>), version };
  }

  /** A configuration change makes a version; `traffic` alone is routing and makes none. */
  async update(ctx: RequestContext, agentId: string, input: UpdateInput): Promise<AgentView> {
    const { traffic, ...config } = input;
    return transaction(this.#db, async (tx) => {
      const current = await this.requireAgent(ctx.orgId, agentId, { within: tx, lock: true });
      return this.#change(tx, ctx, current, config, traffic, 'agent.update', Object.keys(input));
    });
  }

  async listVersions(ctx: RequestContext, agentId: string, query: { page_size: number; cursor?: string }): Promise<Page<AgentVersionView>> {
    await this.requireAgent(ctx.orgId, agentId);
    const before = query.cursor ? decodeIntegerCursor(query.cursor, 1).value : undefined;
    const rows = await new AgentVersionRepository(this.#db).list(ctx.orgId, agentId, query.page_size + 1, before);
    return toPage(rows, query.page_size, (r) => ({ value: r.version, id: r.agentId }), toVersionView);
  }

  async getVersion(ctx: RequestContext, agentId: string, version: number): Promise<AgentVersionView> {
    return toVersionView(await this.#requireVersion(this.#db, ctx.orgId, agentId, version));
  }

  /** What changed from `against` to `version`. */
  async diffVersions(ctx: RequestContext, agentId: string, version: number, against: number): Promise<{ changes: ReturnType<typeof diffConfigs> }> {
    const to = await this.#requireVersion(this.#db, ctx.orgId, agentId, version);
    const from = await this.#requireVersion(this.#db, ctx.orgId, agentId, against);
    return { changes: diffConfigs(from.config, to.config) };
  }

  /**
   * A new version equal to `version`, and the agent's fields set to it. A rollback, so the split is
   * cleared: the restored configuration takes every new call at once.
   */
  async restore(ctx: RequestContext, agentId: string, version: number): Promise<AgentView> {
    return transaction(this.#db, async (tx) => {
      const current = await this.requireAgent(ctx.orgId, agentId, { within: tx, lock: true });
      const kept = await this.#requireVersion(tx, ctx.orgId, agentId, version);
      // A field added after that version keeps its current value (the version never had one).
      const config = Object.fromEntries(VERSIONED_FIELDS.filter((f) => kept.config[f] !== undefined).map((f) => [f, kept.config[f]])) as ConfigInput;
      try {
        return await this.#change(tx, ctx, current, config, null, 'agent.restore', diffConfigs(configOf(await this.#full(tx, current)), kept.config).map((c) => c.field));
      } catch (err) {
        if (err instanceof AppError && err.status === 404) {
          throw Errors.conflict('version_not_restorable', `Version ${version} cannot be restored: ${err.message}`, { cause: err });
        }
        throw err;
      }
    });
  }

  /** Refused while phone numbers are assigned to the agent: they must be unassigned first. */
  async delete(ctx: RequestContext, agentId: string): Promise<void> {
    await transaction(this.#db, async (tx) => {
      const repo = new AgentRepository(tx);
      // The lock makes a concurrent assignment wait for this delete (and then find no agent).
      if (!(await repo.findById(ctx.orgId, agentId, { forUpdate: true }))) throw Errors.notFound('Agent');
      const numbers = await repo.phoneNumberIds(ctx.orgId, agentId);
      if (numbers.length) {
        throw Errors.conflict('agent_has_phone_numbers', `The agent has ${numbers.length} assigned phone number(s); unassign them first`);
      }
      await repo.delete(ctx.orgId, agentId);
      await this.#audit.record(tx, ctx, { action: 'agent.delete', resourceType: 'agent', resourceId: agentId, changedFields: [] });
      await this.#outbox.emit(tx, ctx.orgId, 'agent.deleted', { agent_id: agentId });
    });
  }

  /**
   * Applies a change to the locked agent `current`: its configuration (a new version, numbered after
   * the latest: the row lock makes concurrent changes take turns, so numbers never repeat or skip)
   * and its split (undefined: unchanged). Audited and announced in the same transaction.
   */
  async #change(tx: Executor, ctx: RequestContext, current: AgentRow, input: ConfigInput, traffic: TrafficSplit[] | null | undefined, action: string, changed: string[]): Promise<AgentView> {
    const repo = new AgentRepository(tx);
    const orgId = ctx.orgId;
    checkAnalysisSettings(input.analysis);
    const toolIds = await this.#checkLinks(repo, 'tools', orgId, input.tool_ids);
    const documentIds = await this.#checkLinks(repo, 'documents', orgId, input.documentation_ids);
    // A provider changed under a named integration is checked too: the pair must still fit.
    await this.#checkIntegrations(tx, orgId, {
      stt_provider: input.stt_provider ?? current.sttProvider, tts_provider: input.tts_provider ?? current.ttsProvider, llm_provider: input.llm_provider ?? current.llmProvider,
      stt_integration_id: input.stt_integration_id === undefined ? current.sttIntegrationId : input.stt_integration_id,
      tts_integration_id: input.tts_integration_id === undefined ? current.ttsIntegrationId : input.tts_integration_id,
      llm_integration_id: input.llm_integration_id === undefined ? current.llmIntegrationId : input.llm_integration_id,
    });
    const configured = Object.keys(input).length > 0;
    const version = configured ? current.version + 1 : current.version;
    const split = traffic === undefined ? {} : { traffic: checkTraffic(traffic, version) };
    const row = (await repo.update(orgId, current.id, { ...columns(input), ...split, version }))!;
    if (toolIds) await repo.replaceLinks('tools', orgId, current.id, toolIds);
    if (documentIds) await repo.replaceLinks('documents', orgId, current.id, documentIds);
    const agent = await this.#full(tx, row);
    if (configured) await this.#keepVersion(tx, ctx, agent);
    await this.#audit.record(tx, ctx, { action, resourceType: 'agent', resourceId: current.id, changedFields: changed });
    await this.#outbox.emit(tx, orgId, 'agent.updated', agent);
    return agent;
  }

  async #keepVersion(tx: Executor, ctx: RequestContext, agent: AgentView): Promise<void> {
    await new AgentVersionRepository(tx).insert(ctx.orgId, { agentId: agent.agent_id, version: agent.version, config: configOf(agent), createdBy: authorOf(ctx) });
  }

  async #requireVersion(db: Executor, orgId: string, agentId: string, version: number): Promise<AgentVersionRow> {
    await this.requireAgent(orgId, agentId, { within: db });
    const row = await new AgentVersionRepository(db).find(orgId, agentId, version);
    if (!row) throw Errors.notFound(`Agent version ${version}`);
    return row;
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
    return toAgent(row, await new AgentRepository(db).links(row.clientId, row.id));
  }
}
