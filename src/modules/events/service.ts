import type { Static } from 'typebox';
import type { Db } from '../../db/database.ts';
import type { RequestContext } from '../../core/context.ts';
import { decodeTimeCursor, toPage, type Page } from '../../core/cursor.ts';
import { Errors } from '../../core/errors.ts';
import { iso } from '../../core/schemas.ts';
import type { Mailer } from '../../adapters/mail/mailer.ts';
import type { OrganizationService } from '../organizations/service.ts';
import { EventRepository, WebhookRepository, type DeliveryRow, type EventRow } from './repository.ts';
import type { Delivery, Event, ListEventsQuery } from './schemas.ts';


type EventView = Static<typeof Event>;
type DeliveryView = Static<typeof Delivery>;

export const EVENT_RETENTION_DAYS = 30;

export function toEvent(row: EventRow): EventView {
  return { id: row.id, type: row.type as EventView['type'], created_at: iso(row.createdAt), organization_id: row.clientId, data: row.data };
}

export function toDelivery(row: DeliveryRow): DeliveryView {
  return {
    delivery_id: row.id, webhook_id: row.endpointId, event_id: row.eventId, event_type: row.eventType as DeliveryView['event_type'],
    status: row.status as DeliveryView['status'], attempts: row.attempts, next_attempt_at: iso(row.nextAttemptAt), created_at: iso(row.createdAt),
  };
}

export interface EventServiceDeps {
  db: Db;
  organizations: OrganizationService;
  /** Built on first use: only processes that send mail load a mail transport. */
  mailer: () => Promise<Mailer>;
  now?: () => Date;
}

/** Reading the organization's events, and the jobs around them that are not deliveries. */
export class EventService {
  readonly #deps: EventServiceDeps;
  constructor(deps: EventServiceDeps) {
    this.#deps = deps;
  }

  async list(ctx: RequestContext, query: Static<typeof ListEventsQuery>): Promise<Page<EventView>> {
    const before = query.cursor ? decodeTimeCursor(query.cursor) : undefined;
    const rows = await new EventRepository(this.#deps.db).list(ctx.orgId, query.limit + 1, query.type, before);
    return toPage(rows, query.limit, (r) => ({ value: r.createdAt.toISOString(), id: r.id }), toEvent);
  }

  async get(ctx: RequestContext, eventId: string): Promise<EventView> {
    const row = await new EventRepository(this.#deps.db).findById(ctx.orgId, eventId);
    if (!row) throw Errors.notFound('Event');
    return toEvent(row);
  }

  /** The retention job: events older than 30 days go, with their deliveries. */
  async cleanup(): Promise<number> {
    const now = this.#deps.now?.() ?? new Date();
    return EventRepository.deleteOlderThan(this.#deps.db, new Date(now.getTime() - EVENT_RETENTION_DAYS * 86_400_000));
  }

  /** The admins' email after an endpoint was disabled for failing 5 days. */
  async mailDisabled(job: { clientId: string; webhookId: string }): Promise<void> {
    const endpoint = await new WebhookRepository(this.#deps.db).findById(job.clientId, job.webhookId);
    if (!endpoint || endpoint.enabled || endpoint.disabledReason !== 'failing') return;
    const { organizations } = this.#deps;
    const [name, admins] = await Promise.all([organizations.organizationName(job.clientId), organizations.adminEmails(job.clientId)]);
    const mailer = await this.#deps.mailer();
    for (const to of admins) {
      await mailer.send({
        to,
        subject: `Switchboard disabled a webhook endpoint of ${name ?? job.clientId}`,
        text: [
          `Every delivery to ${endpoint.url} (${endpoint.id}) has failed for 5 days, so the endpoint was disabled.`,
          'Its delivery log shows each attempt: GET /api/webhooks/' + endpoint.id + '/deliveries.',
          'Once the receiver works again, re-enable it with PATCH /api/webhooks/' + endpoint.id + ' {"enabled": true}',
          'and replay what it missed with POST /api/webhooks/' + endpoint.id + '/deliveries/{delivery_id}/retry.',
        ].join('\n'),
      });
    }
  }
}
