import { sql } from 'drizzle-orm';
import { clientOf, type Executor } from '../../db/database.ts';
import { newDeliveryId, newEventId } from '../../core/ids.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import { WEBHOOK_DELIVERY } from './jobs.ts';
import { EVENT_TYPES, type EventType } from './schemas.ts';

export interface EmitOptions {
  /** The agent a call or recording event is about: endpoints with `agent_ids` filter on it. */
  agentId?: string | null;
  /** Deliver to this endpoint only, whatever its filters (`webhook.test`). */
  onlyEndpoint?: string;
  /** Queue no delivery job (the caller attempts the delivery itself, e.g. the test route). */
  noJobs?: boolean;
}

export interface Emitted {
  eventId: string;
  deliveryIds: string[];
}

interface EndpointFilter extends Record<string, unknown> {
  id: string;
  event_types: string[];
  agent_ids: string[];
}

/** Whether an endpoint wants an event: empty lists mean all; `agent_ids` filters call.* and recording.* only. */
export function endpointWants(endpoint: { event_types: string[]; agent_ids: string[] }, type: string, agentId: string | null | undefined): boolean {
  if (endpoint.event_types.length > 0 && !endpoint.event_types.includes(type)) return false;
  const agentScoped = type.startsWith('call.') || type.startsWith('recording.');
  if (agentScoped && endpoint.agent_ids.length > 0 && !(agentId && endpoint.agent_ids.includes(agentId))) return false;
  return true;
}

/**
 * The transactional outbox. `emit` writes the event row, one delivery row per endpoint that wants
 * it and their delivery jobs in the caller's transaction: a change that rolls back emits nothing,
 * one that commits has its event and its deliveries queued. With no endpoint registered the cost is
 * one statement (the event's insert and the endpoint lookup go together).
 */
export class EventOutbox {
  readonly #queue: JobQueue;
  readonly #now: () => Date;
  constructor(deps: { queue: JobQueue; now?: () => Date }) {
    this.#queue = deps.queue;
    this.#now = deps.now ?? (() => new Date());
  }

  async emit(tx: Executor, orgId: string, type: EventType, data: object, options: EmitOptions = {}): Promise<Emitted> {
    if (!(EVENT_TYPES as readonly string[]).includes(type)) throw new Error(`Unknown event type ${type}`);
    const client = clientOf(tx); // refuses the pool: an event is always part of a transaction
    const eventId = newEventId();
    const createdAt = this.#now();
    const only = options.onlyEndpoint ?? null;
    const { rows } = await tx.execute<EndpointFilter>(sql`
      WITH inserted AS (
        INSERT INTO events (id, client_id, type, data, created_at)
        VALUES (${eventId}, ${orgId}, ${type}, ${JSON.stringify(data)}::jsonb, ${createdAt.toISOString()}::timestamptz)
      )
      SELECT id, event_types, agent_ids FROM webhook_endpoints
      WHERE client_id = ${orgId} AND (${only}::text IS NULL AND enabled OR id = ${only}::text)`);
    const targets = only ? rows : rows.filter((e) => endpointWants(e, type, options.agentId));
    if (targets.length === 0) return { eventId, deliveryIds: [] };

    const deliveries = targets.map((endpoint) => ({ id: newDeliveryId(), endpointId: endpoint.id }));
    const values = deliveries.map((d) => sql`(${d.id}, ${orgId}, ${d.endpointId}, ${eventId}, ${type}, ${createdAt.toISOString()}::timestamptz, ${createdAt.toISOString()}::timestamptz)`);
    await tx.execute(sql`
      INSERT INTO webhook_deliveries (id, client_id, endpoint_id, event_id, event_type, next_attempt_at, created_at)
      VALUES ${sql.join(values, sql`, `)}`);
    if (!options.noJobs) {
      for (const d of deliveries) await this.#queue.send(WEBHOOK_DELIVERY, { clientId: orgId, deliveryId: d.id, attempt: 1 }, { within: client });
    }
    return { eventId, deliveryIds: deliveries.map((d) => d.id) };
  }
}
