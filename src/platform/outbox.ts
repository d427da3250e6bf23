import { type Executor } from '../db/database.ts';
import { unitOf } from '../db/unit-of-work.ts';
import { BASE62, newEventId, randomBase62 } from '../core/ids.ts';
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
  /** The id the first endpoint's delivery gets (with `onlyEndpoint`, that endpoint's). */
  firstDeliveryId: string;
}

/** `agent_ids` filters call.* and recording.* events only. */
const isAgentScoped = (type: string) => type.startsWith('call.') || type.startsWith('recording.');

const INSERT_EVENT = 'INSERT INTO events (id, client_id, type, data, created_at) VALUES ($1, $2, $3, $4::jsonb, $5::timestamptz)';

/** Characters of a delivery id drawn per event; the last three number the event's deliveries (62³ of them). */
const DELIVERY_ID_RANDOM = 17;
/** The n-th delivery's id (n from 1): the event's random part, then n in three base62 digits. */
const deliveryIdSql = (random: string, n: string) =>
  `'dlv_' || ${random} || substr('${BASE62}', (${n} / 3844) % 62 + 1, 1) || substr('${BASE62}', (${n} / 62) % 62 + 1, 1) || substr('${BASE62}', ${n} % 62 + 1, 1)`;
const deliveryIdOf = (random: string, n: number) => `dlv_${random}${BASE62[Math.floor(n / 3844) % 62]}${BASE62[Math.floor(n / 62) % 62]}${BASE62[n % 62]}`;

/**
 * One delivery per endpoint that wants the event ($2 organization, $6 event id, $3 type, $5 creation
 * time, $4 due time or null, $1 the event's random delivery id part); which endpoints, by variant.
 */
function insertDeliveries(wants: string): string {
  return `INSERT INTO webhook_deliveries (id, client_id, endpoint_id, event_id, event_type, next_attempt_at, created_at)
    SELECT ${deliveryIdSql('$1::text', 'n')}, $2, id, $6, $3, $4::timestamptz, $5::timestamptz
      FROM (SELECT id, row_number() OVER (ORDER BY id)::int AS n FROM webhook_endpoints WHERE client_id = $2 AND ${wants}) AS targets`;
}

/** Which endpoints want the event: enabled, and `event_types` / `agent_ids` empty (all) or naming it; $7 the agent. */
const DELIVERIES = {
  only: insertDeliveries('id = $7'),
  all: insertDeliveries('enabled AND (jsonb_array_length(event_types) = 0 OR event_types ? $3)'),
  byAgent: insertDeliveries('enabled AND (jsonb_array_length(event_types) = 0 OR event_types ? $3) AND (jsonb_array_length(agent_ids) = 0 OR coalesce(agent_ids ? $7::text, false))'),
};

/**
 * The transactional outbox. `emit` adds the event row and one delivery row per endpoint that wants it
 * to the transaction's unit of work (db/unit-of-work.ts), written with the change's other pending
 * writes just before its COMMIT: a change that rolls back emits nothing, one that commits has its
 * event and its deliveries, which the dispatchers (dispatcher.ts) claim once due. No job is queued per
 * delivery, so an endpoint costs the change one more row, not a queue write.
 */
export class EventOutbox {
  readonly #now: () => Date;
  constructor(deps: { now?: () => Date } = {}) {
    this.#now = deps.now ?? (() => new Date());
  }

  async emit(tx: Executor, orgId: string, type: EventType, data: object, options: EmitOptions = {}): Promise<Emitted> {
    if (!(EVENT_TYPES as readonly string[]).includes(type)) throw new Error(`Unknown event type ${type}`);
    // An event is always part of a change: never on the pool, nor in a savepoint whose rollback would keep it.
    const unit = unitOf(tx);
    if (!unit) throw new Error('emit needs a transaction opened by db/unit-of-work.ts');
    const eventId = newEventId();
    const createdAt = this.#now().toISOString();
    const random = randomBase62(DELIVERY_ID_RANDOM);
    unit.defer({ name: 'outbox_event', text: INSERT_EVENT, values: [eventId, orgId, type, JSON.stringify(data), createdAt] });
    const variant = options.onlyEndpoint ? 'only' : isAgentScoped(type) ? 'byAgent' : 'all';
    const values: unknown[] = [random, orgId, type, options.attemptedByCaller ? null : createdAt, createdAt, eventId];
    if (variant !== 'all') values.push(options.onlyEndpoint ?? options.agentId ?? null);
    unit.defer({ name: `outbox_deliveries_${variant}`, text: DELIVERIES[variant], values });
    return { eventId, firstDeliveryId: deliveryIdOf(random, 1) };
  }
}
