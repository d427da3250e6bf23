import type { Static } from 'typebox';
import type { Db, Executor } from '../../db/database.ts';
import type { RequestContext } from '../../core/context.ts';
import { pageNewestFirst, type Page } from '../../core/cursor.ts';
import { Errors } from '../../core/errors.ts';
import { newId } from '../../core/ids.ts';
import { iso } from '../../core/schemas.ts';
import type { SecretBox } from '../../core/secret-box.ts';
import type { CarrierClient, CarrierCredentials } from '../../adapters/carrier/carrier-client.ts';
import type { AllowedNetworks } from '../../adapters/http/outbound-addresses.ts';
import { outboundRefusal } from '../../adapters/http/outbound-url-check.ts';
import type { ProviderCredentials, ProviderValidator } from '../../adapters/providers/provider-validator.ts';
import { integrationProviderFor, PROVIDERS_BY_CATEGORY, servesCategory, VOICE_CATEGORIES, type VoiceCategory } from './providers.ts';
import { IntegrationRepository, type IntegrationRow } from './repository.ts';
import type { CreateIntegrationBody, Integration, IntegrationSummary, UpdateIntegrationBody } from './schemas.ts';
import type { AuditService } from '../audit/service.ts';
import { transaction } from '../../db/unit-of-work.ts';

export { VOICE_CATEGORIES, type VoiceCategory } from './providers.ts';
export type { ProviderCredentials } from '../../adapters/providers/provider-validator.ts';

type SummaryView = Static<typeof IntegrationSummary>;
type CreateInput = Static<typeof CreateIntegrationBody>;
type AnyCredentials = CreateInput['credentials'];

const invalid = (path: string, message: string) => Errors.validation(`Invalid ${path.replace('body.', '')}`, [{ path, message }]);

/** The category an integration is stored under: carrier_a is telephony; a speech or language provider's is given, or its only one. */
function categoryOf(input: CreateInput): string {
  if (input.provider === 'carrier_a') {
    if (input.category !== undefined && input.category !== 'telephony') throw invalid('body.category', 'carrier_a is a telephony integration');
    return 'telephony';
  }
  if (input.category === 'telephony') throw invalid('body.category', `${input.provider} is a stt, tts or llm integration`);
  const serving = VOICE_CATEGORIES.filter((c) => PROVIDERS_BY_CATEGORY[c].includes(input.provider));
  if (input.category !== undefined) {
    if (!serving.includes(input.category)) throw invalid('body.category', `${input.provider} serves ${serving.join(', ')}`);
    return input.category;
  }
  if (serving.length !== 1) throw invalid('body.category', `${input.provider} serves ${serving.join(', ')}: say which`);
  return serving[0]!;
}
type FullView = Static<typeof Integration>;

const toSummary = (row: IntegrationRow): SummaryView => ({
  integration_id: row.id,
  name: row.name,
  provider: row.provider,
  category: row.category,
  status: row.status as SummaryView['status'],
  created_at: iso(row.createdAt),
});

const toFull = (row: IntegrationRow): FullView => ({ ...toSummary(row), client_id: row.clientId, updated_at: iso(row.updatedAt) });

/** Field names only: an integration's credentials never reach the audit log. */
const audited = (action: string, id: string, input: object) => ({ action, resourceType: 'integration', resourceId: id, changedFields: Object.keys(input) });

export class IntegrationService {
  readonly #db: Db;
  readonly #secrets: SecretBox;
  readonly #carrier: CarrierClient;
  readonly #audit: Pick<AuditService, 'change' | 'record'>;
  readonly #providers: ProviderValidator;
  readonly #allowedNetworks: AllowedNetworks;
  constructor(deps: {
    db: Db; secrets: SecretBox; carrier: CarrierClient; audit: Pick<AuditService, 'change' | 'record'>;
    /** The stt, tts and llm providers' validation (the voice runtime's adapters). */
    providers: ProviderValidator;
    /** The outbound address rule's exemptions (ALLOWED_NETWORKS), which a provider's base_url must pass. */
    allowedNetworks: AllowedNetworks;
  }) {
    this.#db = deps.db;
    this.#providers = deps.providers;
    this.#allowedNetworks = deps.allowedNetworks;
    this.#audit = deps.audit;
    this.#secrets = deps.secrets;
    this.#carrier = deps.carrier;
  }

  async create(ctx: RequestContext, input: CreateInput): Promise<FullView> {
    const category = categoryOf(input);
    await this.#checkCredentials(input.provider, input.credentials);
    const row = await this.#audit.change(ctx, (tx) => new IntegrationRepository(tx).insert(ctx.orgId, {
      id: newId('intg'),
      name: input.name,
      provider: input.provider,
      category,
      credentialsEncrypted: this.#secrets.seal(JSON.stringify(input.credentials)),
    }), (created) => audited('integration.create', created.id, input));
    return toFull(row);
  }

  async list(ctx: RequestContext, query: { page_size: number; cursor?: string }): Promise<Page<SummaryView>> {
    return pageNewestFirst(new IntegrationRepository(this.#db), ctx.orgId, query, toSummary);
  }

  async get(ctx: RequestContext, id: string): Promise<FullView> {
    return toFull(await this.#find(ctx, id));
  }

  async update(ctx: RequestContext, id: string, input: Static<typeof UpdateIntegrationBody>): Promise<FullView> {
    if (input.credentials !== undefined) await this.#checkCredentials((await this.#find(ctx, id)).provider, input.credentials);
    const row = await this.#audit.change(ctx, async (tx) => {
      const updated = await new IntegrationRepository(tx).update(ctx.orgId, id, {
        ...(input.name === undefined ? {} : { name: input.name }),
        ...(input.credentials === undefined ? {} : { credentialsEncrypted: this.#secrets.seal(JSON.stringify(input.credentials)) }),
      });
      if (!updated) throw Errors.notFound('Integration');
      return updated;
    }, () => audited('integration.update', id, input));
    return toFull(row);
  }

  /** Refused while phone numbers were imported through it. */
  async delete(ctx: RequestContext, id: string): Promise<void> {
    await transaction(this.#db, async (tx) => {
      const repo = new IntegrationRepository(tx);
      if (!(await repo.findById(ctx.orgId, id))) throw Errors.notFound('Integration');
      const numbers = await repo.phoneNumberCount(ctx.orgId, id);
      if (numbers > 0) throw Errors.conflict('integration_in_use', `${numbers} phone number(s) use this integration; delete them first`);
      await repo.delete(ctx.orgId, id);
      await this.#audit.record(tx, ctx, audited('integration.delete', id, {}));
    });
  }

  /** The provider's test call, made outside any transaction; the outcome sets the status. */
  async validate(ctx: RequestContext, id: string): Promise<{ message: string; data: FullView }> {
    const row = await this.#find(ctx, id);
    const check = row.provider === 'carrier_a' ? await this.#carrier.checkCredentials(this.credentialsOf(row)) : await this.#validateProvider(row);
    const updated = await this.#audit.change(ctx, async (tx) => {
      const changed = await new IntegrationRepository(tx).update(ctx.orgId, id, { status: check.ok ? 'active' : 'invalid', lastValidatedAt: new Date() });
      if (!changed) throw Errors.notFound('Integration'); // deleted while the provider answered
      return changed;
    }, () => audited('integration.validate', id, { status: true, last_validated_at: true }));
    const message = check.ok ? 'Credentials are active' : `Credentials are invalid: ${check.reason}`;
    return { message, data: toFull(updated) };
  }

  /**
   * The integration another resource is created through (a phone number import): 404 when it does
   * not exist, 403 when it is another organization's, as the specification says.
   */
  async findForUse(ctx: RequestContext, id: string): Promise<{ integration: IntegrationRow; credentials: CarrierCredentials }> {
    const repo = new IntegrationRepository(this.#db);
    const integration = await repo.findById(ctx.orgId, id);
    if (!integration) {
      if (await repo.existsElsewhere(ctx.orgId, id)) throw Errors.forbidden('The integration belongs to another organization');
      throw Errors.notFound('Integration');
    }
    return { integration, credentials: this.credentialsOf(integration) };
  }

  credentialsOf(row: IntegrationRow): CarrierCredentials {
    return JSON.parse(this.#secrets.open(row.credentialsEncrypted)) as CarrierCredentials;
  }

  /**
   * The integration serving an agent's provider setting (extensions.md §10): the one the agent names
   * (when it still exists and serves it), else the newest active one of that provider; undefined
   * when the organization has none. Credentials decrypted: for the call token's runtime only.
   */
  async forAgentProvider(orgId: string, category: VoiceCategory, agentProvider: string, integrationId: string | null):
    Promise<{ integration: IntegrationRow; credentials: ProviderCredentials } | undefined> {
    const repo = new IntegrationRepository(this.#db);
    const provider = integrationProviderFor(category, agentProvider);
    const named = integrationId ? await repo.findById(orgId, integrationId) : undefined;
    const integration = named && named.provider === provider && servesCategory(named, category)
      ? named
      : integrationId ? undefined : await repo.newestActive(orgId, provider, VOICE_CATEGORIES);
    if (!integration || !servesCategory(integration, category)) return undefined;
    return { integration, credentials: JSON.parse(this.#secrets.open(integration.credentialsEncrypted)) as ProviderCredentials };
  }

  /**
   * The language model a post-call analysis asks (extensions.md §13): the integration it names
   * (any of the organization's that serves `llm`), else the agent's LLM integration as a call would
   * pick it. A string says why there is none usable (missing, or its base_url refused now).
   */
  async languageModelFor(orgId: string, named: string | null, agent: { llmProvider: string; llmIntegrationId: string | null }):
    Promise<{ provider: string; credentials: ProviderCredentials } | string> {
    let chosen: { integration: IntegrationRow; credentials: ProviderCredentials } | undefined;
    if (named) {
      const row = await new IntegrationRepository(this.#db).findById(orgId, named);
      if (row && servesCategory(row, 'llm') && row.provider !== 'carrier_a') {
        chosen = { integration: row, credentials: JSON.parse(this.#secrets.open(row.credentialsEncrypted)) as ProviderCredentials };
      }
    } else {
      chosen = await this.forAgentProvider(orgId, 'llm', agent.llmProvider, agent.llmIntegrationId);
    }
    if (!chosen) return named ? `the analysis's integration ${named} does not exist or serves no llm` : `no ${agent.llmProvider} integration serves the agent's llm`;
    if (chosen.credentials.base_url) {
      // Checked at each use: the name may resolve elsewhere now than when it was stored.
      const refusal = await outboundRefusal(chosen.credentials.base_url, this.#allowedNetworks);
      if (refusal) return `base_url ${refusal}`;
    }
    return { provider: chosen.integration.provider, credentials: chosen.credentials };
  }

  /**
   * 400 unless `integrationId` is an integration of the organization that can serve the agent's
   * provider setting (the matching provider, of the category or, for openai, any of stt/tts/llm).
   */
  async checkServesAgent(within: Executor, orgId: string, category: VoiceCategory, agentProvider: string, integrationId: string): Promise<void> {
    const row = await new IntegrationRepository(within).findById(orgId, integrationId);
    const provider = integrationProviderFor(category, agentProvider);
    const path = `body.${category}_integration_id`;
    if (!row) throw invalid(path, `no integration ${integrationId} in this organization`);
    if (row.provider !== provider || !servesCategory(row, category)) {
      throw invalid(path, `integration ${integrationId} is ${row.provider} (${row.category}); ${category}_provider ${agentProvider} needs a ${provider} ${category} integration`);
    }
  }

  /** The credentials' shape fits the provider, and a base_url passes the outbound address rule. */
  async #checkCredentials(provider: string, credentials: AnyCredentials): Promise<void> {
    const carrier = 'account_sid' in credentials;
    if (provider === 'carrier_a' && !carrier) throw invalid('body.credentials', 'carrier_a takes {account_sid, auth_token}');
    if (provider === 'carrier_a' || !('api_key' in credentials)) {
      if (provider !== 'carrier_a') throw invalid('body.credentials', `${provider} takes {api_key, base_url?${provider === 'azure' ? ', region' : ''}}`);
      return;
    }
    if (credentials.region != null && provider !== 'azure') throw invalid('body.credentials.region', 'only azure takes a region');
    if (provider === 'azure' && credentials.region == null && credentials.base_url == null) throw invalid('body.credentials.region', 'azure needs a region (or a base_url)');
    if (credentials.base_url != null) {
      const refusal = await outboundRefusal(credentials.base_url, this.#allowedNetworks);
      if (refusal) throw Errors.destinationRefused(`base_url ${refusal}`);
    }
  }

  async #validateProvider(row: IntegrationRow): Promise<{ ok: true } | { ok: false; reason: string }> {
    const credentials = JSON.parse(this.#secrets.open(row.credentialsEncrypted)) as ProviderCredentials;
    if (credentials.base_url) {
      // Checked again: the name may resolve elsewhere now than when it was stored.
      const refusal = await outboundRefusal(credentials.base_url, this.#allowedNetworks);
      if (refusal) return { ok: false, reason: `base_url ${refusal}` };
    }
    const check = await this.#providers.validate(row.provider, credentials);
    return check.ok ? { ok: true } : { ok: false, reason: check.detail };
  }

  async #find(ctx: RequestContext, id: string): Promise<IntegrationRow> {
    const row = await new IntegrationRepository(this.#db).findById(ctx.orgId, id);
    if (!row) throw Errors.notFound('Integration');
    return row;
  }
}
