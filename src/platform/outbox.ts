import { sql } from 'drizzle-orm';
import { clientOf, type Executor } from '../db/database.ts';
import { carriedWrites } from '../db/ride-along.ts';
import { newDeliveryId, newEventId } from '../core/ids.ts';
import { EVENT_TYPES, type EventType } from './event-types.ts';

export interface EmitOptions {
  /** The agent a call or recording event is about: endpoints with `agent_ids` filter on it. */
  agentId?: string | null;
  /** Deliver to this endpoint only, whatever its filters (`webhook.test`). */
  onlyEndpoint?: string;
  /**
   * The caller makes the first attempt itself (the test route): the delivery is written with no
   * due time, so no dispatcher claims it meanwhile; a failed attempt schedules the retries.
   */
  attemptedByCaller?: boolean;
}

export interface Emitted {
  eventId: string;
  deliveryIds: string[];
}

/** Delivery ids generated ahead for one emit: more endpoints than this take a second statement. */
const IDS_AHEAD = 8;

/** `agent_ids` filters call.* and recording.* events only. */
const isAgentScoped = (type: string) => type.startsWith('call.') || type.startsWith('recording.');

/**
 * The transactional outbox. `emit` writes the event row and one delivery row per endpoint that wants
 * it, in the caller's transaction and in one statement: a change that rolls back emits nothing, one
 * that commits has its event and its deliveries (the same statement carries the writes the change
 * deferred until then, such as its audit entry: db/ride-along.ts), which the dispatchers (dispatcher.ts) claim once
 * due. No job is queued per delivery, so an endpoint costs the change one more row, not a queue write.
 */
export class EventOutbox {
  readonly #now: () => Date;
  constructor(deps: { now?: () => Date } = {}) {
    this.#now = deps.now ?? (() => new Date());
  }

  async emit(tx: Executor, orgId: string, type: EventType, data: object, options: EmitOptions = {}): Promise<Emitted> {
    if (!(EVENT_TYPES as readonly string[]).includes(type)) throw new Error(`Unknown event type ${type}`);
    clientOf(tx); // refuses the pool: an event is always part of a transaction
    const eventId = newEventId();
    const createdAt = this.#now().toISOString();
    const dueAt = options.attemptedByCaller ? null : createdAt;
    const ids = Array.from({ length: IDS_AHEAD }, newDeliveryId);
    const { rows } = await tx.execute<{ delivery_ids: string[]; overflow: string[] }>(sql`
      WITH inserted AS (
        INSERT INTO events (id, client_id, type, data, created_at)
        VALUES (${eventId}, ${orgId}, ${type}, ${JSON.stringify(data)}::jsonb, ${createdAt}::timestamptz)
      ), targets AS (
        SELECT id, row_number() OVER (ORDER BY id) AS n FROM webhook_endpoints
        WHERE client_id = ${orgId} AND ${this.#wants(type, options)}
      ), delivered AS (
        INSERT INTO webhook_deliveries (id, client_id, endpoint_id, event_id, event_type, next_attempt_at, created_at)
        SELECT (string_to_array(${ids.join(',')}, ','))[n], ${orgId}, id, ${eventId}, ${type}, ${dueAt}::timestamptz, ${createdAt}::timestamptz
          FROM targets WHERE n <= ${IDS_AHEAD}
        RETURNING id
      )${carriedWrites(tx)}
      SELECT ARRAY(SELECT id FROM delivered) AS delivery_ids, ARRAY(SELECT id FROM targets WHERE n > ${IDS_AHEAD}) AS overflow`);
    const deliveryIds = [...rows[0]!.delivery_ids];
    for (const endpointId of rows[0]!.overflow) {
      const id = newDeliveryId();
      await tx.execute(sql`
        INSERT INTO webhook_deliveries (id, client_id, endpoint_id, event_id, event_type, next_attempt_at, created_at)
        VALUES (${id}, ${orgId}, ${endpointId}, ${eventId}, ${type}, ${dueAt}::timestamptz, ${createdAt}::timestamptz)`);
      deliveryIds.push(id);
    }
    return { eventId, deliveryIds };
  }

  /** Which endpoints want the event: enabled, and `event_types` / `agent_ids` empty (all) or naming it. */
  #wants(type: string, options: EmitOptions) {
    if (options.onlyEndpoint) return sql`id = ${options.onlyEndpoint}`;
    const agentFilter = isAgentScoped(type)
      ? sql`AND (jsonb_array_length(agent_ids) = 0 OR coalesce(agent_ids ? ${options.agentId ?? null}::text, false))`
      : sql``;
    return sql`enabled AND (jsonb_array_length(event_types) = 0 OR event_types ? ${type}) ${agentFilter}`;
  }
}
