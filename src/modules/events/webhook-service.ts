import { randomBytes } from 'node:crypto';
import type { Static } from 'typebox';
import type { Db } from '../../db/database.ts';
import type { RequestContext } from '../../core/context.ts';
import { decodeTimeCursor, toPage, type Page } from '../../core/cursor.ts';
import { Errors } from '../../core/errors.ts';
import { newId } from '../../core/ids.ts';
import { iso } from '../../core/schemas.ts';
import type { SecretBox } from '../../core/secret-box.ts';
import { DestinationRefusedError, type AllowedNetworks } from '../../adapters/http/outbound-addresses.ts';
import type { AgentService } from '../agents/service.ts';
import type { AuditService } from '../audit/service.ts';
import { checkDestination, type WebhookDeliverer } from './delivery.ts';
import type { EventOutbox } from '../../platform/outbox.ts';
import { DeliveryRepository, WebhookRepository, type EndpointRow, type NewEndpointRow } from './repository.ts';
import type { CreateWebhookBody, Delivery, ListDeliveriesQuery, ListWebhooksQuery, UpdateWebhookBody, Webhook } from './schemas.ts';
import { toDelivery } from './service.ts';
import { transaction } from '../../db/unit-of-work.ts';

type WebhookView = Static<typeof Webhook>;
type DeliveryView = Static<typeof Delivery>;

/** For 24 hours after a rotation the old secret signs beside the new one. */
export const ROTATION_OVERLAP_MS = 24 * 3_600_000;

export function toWebhook(row: EndpointRow): WebhookView {
  return {
    webhook_id: row.id, url: row.url, description: row.description, event_types: row.eventTypes as WebhookView['event_types'],
    agent_ids: row.agentIds, enabled: row.enabled, disabled_reason: row.disabledReason as WebhookView['disabled_reason'],
    client_id: row.clientId, created_at: iso(row.createdAt), updated_at: iso(row.updatedAt),
  };
}

/** `whsec_` + base64 of 24 random bytes: the form the standardwebhooks libraries read. */
function newSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

export interface WebhookServiceDeps {
  db: Db;
  secrets: SecretBox;
  outbox: EventOutbox;
  deliverer: WebhookDeliverer;
  agents: AgentService;
  allowedNetworks: AllowedNetworks;
  /** webhook.* entries: field names only, so no secret reaches the log. */
  audit: Pick<AuditService, 'record' | 'change'>;
  now?: () => Date;
}

const audited = (action: string, id: string, fields: string[] = []) => ({ action, resourceType: 'webhook', resourceId: id, changedFields: fields });

/** Webhook endpoints: management, secret rotation, the test event, the delivery log and replay. */
export class WebhookService {
  readonly #deps: WebhookServiceDeps;
  readonly #now: () => Date;
  constructor(deps: WebhookServiceDeps) {
    this.#deps = deps;
    this.#now = deps.now ?? (() => new Date());
  }

  /** The URL must parse and reach an allowed destination now (and is checked again at every delivery). */
  async #checkUrl(text: string): Promise<string> {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw Errors.validation('url is not a URL', [{ path: 'body.url', message: 'must be an absolute https URL' }]);
    }
    try {
      await checkDestination(url, this.#deps.allowedNetworks);
    } catch (err) {
      if (err instanceof DestinationRefusedError) throw Errors.destinationRefused(err.message);
      throw err;
    }
    return url.toString();
  }

  async #checkAgents(orgId: string, agentIds: string[] | undefined): Promise<void> {
    for (const [i, id] of (agentIds ?? []).entries()) {
      try {
        await this.#deps.agents.requireAgent(orgId, id);
      } catch {
        throw Errors.validation(`No agent ${id}`, [{ path: `body.agent_ids.${i}`, message: 'is not an agent of this organization' }]);
      }
    }
  }

  async create(ctx: RequestContext, input: Static<typeof CreateWebhookBody>): Promise<WebhookView & { secret: string }> {
    const url = await this.#checkUrl(input.url);
    await this.#checkAgents(ctx.orgId, input.agent_ids);
    const secret = newSecret();
    const row = await this.#deps.audit.change(ctx, (tx) => new WebhookRepository(tx).insert(ctx.orgId, {
      id: newId('whk'), url, description: input.description ?? '', eventTypes: input.event_types ?? [], agentIds: input.agent_ids ?? [],
      secretSealed: this.#deps.secrets.seal(secret),
    }), (created) => audited('webhook.create', created.id, [...Object.keys(input), 'secret']));
    return { ...toWebhook(row), secret };
  }

  async list(ctx: RequestContext, query: Static<typeof ListWebhooksQuery>): Promise<Page<WebhookView>> {
    const before = query.cursor ? decodeTimeCursor(query.cursor) : undefined;
    const rows = await new WebhookRepository(this.#deps.db).list(ctx.orgId, query.limit + 1, before);
    return toPage(rows, query.limit, (r) => ({ value: r.createdAt.toISOString(), id: r.id }), toWebhook);
  }

  async #require(orgId: string, id: string): Promise<EndpointRow> {
    const row = await new WebhookRepository(this.#deps.db).findById(orgId, id);
    if (!row) throw Errors.notFound('Webhook');
    return row;
  }

  async get(ctx: RequestContext, id: string): Promise<WebhookView> {
    return toWebhook(await this.#require(ctx.orgId, id));
  }

  async update(ctx: RequestContext, id: string, input: Static<typeof UpdateWebhookBody>): Promise<WebhookView> {
    await this.#require(ctx.orgId, id);
    const changes: Partial<NewEndpointRow> = {};
    if (input.url !== undefined) changes.url = await this.#checkUrl(input.url);
    if (input.description !== undefined) changes.description = input.description;
    if (input.event_types !== undefined) changes.eventTypes = input.event_types;
    if (input.agent_ids !== undefined) {
      await this.#checkAgents(ctx.orgId, input.agent_ids);
      changes.agentIds = input.agent_ids;
    }
    if (input.enabled === true) Object.assign(changes, { enabled: true, disabledReason: null, failingSince: null });
    if (input.enabled === false) Object.assign(changes, { enabled: false, disabledReason: 'manual' });
    const row = await this.#deps.audit.change(ctx, async (tx) => {
      const updated = await new WebhookRepository(tx).update(ctx.orgId, id, changes);
      if (!updated) throw Errors.notFound('Webhook');
      return updated;
    }, () => audited('webhook.update', id, Object.keys(input)));
    return toWebhook(row);
  }

  async delete(ctx: RequestContext, id: string): Promise<WebhookView> {
    const row = await this.#deps.audit.change(ctx, async (tx) => {
      const deleted = await new WebhookRepository(tx).delete(ctx.orgId, id);
      if (!deleted) throw Errors.notFound('Webhook');
      return deleted;
    }, () => audited('webhook.delete', id));
    return toWebhook(row);
  }

  /** A new secret; the current one keeps signing beside it for 24 hours (two signatures per request). */
  async rotateSecret(ctx: RequestContext, id: string): Promise<{ secret: string }> {
    const secret = newSecret();
    await transaction(this.#deps.db, async (tx) => {
      const repo = new WebhookRepository(tx);
      const row = await repo.findById(ctx.orgId, id, { forUpdate: true });
      if (!row) throw Errors.notFound('Webhook');
      await repo.update(ctx.orgId, id, {
        secretSealed: this.#deps.secrets.seal(secret), previousSecretSealed: row.secretSealed,
        previousSecretExpiresAt: new Date(this.#now().getTime() + ROTATION_OVERLAP_MS),
      });
      await this.#deps.audit.record(tx, ctx, audited('webhook.rotate_secret', id, ['secret']));
    });
    return { secret };
  }

  /** Sends a `webhook.test` event to this endpoint now and returns its delivery with the attempt. */
  async test(ctx: RequestContext, id: string): Promise<DeliveryView> {
    const deliveryId = await transaction(this.#deps.db, async (tx) => {
      const row = await new WebhookRepository(tx).findById(ctx.orgId, id);
      if (!row) throw Errors.notFound('Webhook');
      const emitted = await this.#deps.outbox.emit(tx, ctx.orgId, 'webhook.test', { webhook_id: id }, { onlyEndpoint: id, attemptedByCaller: true });
      return emitted.firstDeliveryId;
    });
    return toDelivery((await this.#deps.deliverer.attempt(ctx.orgId, deliveryId))!);
  }

  async deliveries(ctx: RequestContext, id: string, query: Static<typeof ListDeliveriesQuery>): Promise<Page<DeliveryView>> {
    await this.#require(ctx.orgId, id);
    const before = query.cursor ? decodeTimeCursor(query.cursor) : undefined;
    const rows = await new DeliveryRepository(this.#deps.db).list(ctx.orgId, id, query.limit + 1, { status: query.status, eventType: query.event_type }, before);
    return toPage(rows, query.limit, (r) => ({ value: r.createdAt.toISOString(), id: r.id }), toDelivery);
  }

  /** Sends the delivery's event again now: the same `webhook-id`, a new timestamp and signature. */
  async retry(ctx: RequestContext, id: string, deliveryId: string): Promise<DeliveryView> {
    const delivery = await new DeliveryRepository(this.#deps.db).findById(ctx.orgId, deliveryId);
    if (!delivery || delivery.endpointId !== id) throw Errors.notFound('Delivery');
    // Recorded before the attempt: the replay happened whatever the receiver answers.
    await this.#deps.audit.record(this.#deps.db, ctx, { action: 'webhook_delivery.retry', resourceType: 'webhook_delivery', resourceId: deliveryId });
    return toDelivery((await this.#deps.deliverer.attempt(ctx.orgId, deliveryId))!);
  }
}
