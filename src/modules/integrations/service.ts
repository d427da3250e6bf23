import type { Static } from 'typebox';
import type { Db } from '../../db/database.ts';
import type { RequestContext } from '../../core/context.ts';
import { pageNewestFirst, type Page } from '../../core/cursor.ts';
import { Errors } from '../../core/errors.ts';
import { newId } from '../../core/ids.ts';
import { iso } from '../../core/schemas.ts';
import type { SecretBox } from '../../core/secret-box.ts';
import type { CarrierClient, CarrierCredentials } from '../../adapters/carrier/carrier-client.ts';
import { IntegrationRepository, type IntegrationRow } from './repository.ts';
import type { CreateIntegrationBody, Integration, IntegrationSummary, UpdateIntegrationBody } from './schemas.ts';
import type { AuditService } from '../audit/service.ts';

type SummaryView = Static<typeof IntegrationSummary>;
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
  constructor(deps: { db: Db; secrets: SecretBox; carrier: CarrierClient; audit: Pick<AuditService, 'change' | 'record'> }) {
    this.#db = deps.db;
    this.#audit = deps.audit;
    this.#secrets = deps.secrets;
    this.#carrier = deps.carrier;
  }

  async create(ctx: RequestContext, input: Static<typeof CreateIntegrationBody>): Promise<FullView> {
    const row = await this.#audit.change(ctx, (tx) => new IntegrationRepository(tx).insert(ctx.orgId, {
      id: newId('intg'),
      name: input.name,
      provider: input.provider,
      category: input.category ?? 'telephony',
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
    await this.#db.transaction(async (tx) => {
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
    const check = await this.#carrier.checkCredentials(this.credentialsOf(row));
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

  async #find(ctx: RequestContext, id: string): Promise<IntegrationRow> {
    const row = await new IntegrationRepository(this.#db).findById(ctx.orgId, id);
    if (!row) throw Errors.notFound('Integration');
    return row;
  }
}
