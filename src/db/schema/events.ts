import { sql } from 'drizzle-orm';
import { boolean, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { clientId, createdAt, updatedAt } from './columns.ts';

/** One attempt of a delivery, as the delivery log shows it. */
export interface DeliveryAttempt {
  attempt: number;
  at: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  response_body: string | null;
}

/**
 * The transactional outbox: one row per change an organization may react to, written in the
 * transaction of the change itself (extensions.md §1). Kept 30 days by the cleanup job.
 */
export const events = pgTable(
  'events',
  {
    id: text('id').primaryKey(),
    clientId: clientId(),
    type: text('type').notNull(),
    data: jsonb('data').$type<Record<string, unknown>>().notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    index('events_client_created_idx').on(t.clientId, t.createdAt, t.id),
    index('events_client_type_created_idx').on(t.clientId, t.type, t.createdAt, t.id),
    index('events_created_idx').on(t.createdAt),
  ],
);

/** Where an organization's events are sent. Secrets are sealed (SecretBox): they must be read to sign. */
export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    id: text('id').primaryKey(),
    clientId: clientId(),
    url: text('url').notNull(),
    description: text('description').notNull().default(''),
    eventTypes: jsonb('event_types').$type<string[]>().notNull().default([]),
    agentIds: jsonb('agent_ids').$type<string[]>().notNull().default([]),
    enabled: boolean('enabled').notNull().default(true),
    /** `gone`, `failing`, `manual`, or null while enabled. */
    disabledReason: text('disabled_reason'),
    secretSealed: text('secret_sealed').notNull(),
    /** The secret before the last rotation, which still signs until `previous_secret_expires_at`. */
    previousSecretSealed: text('previous_secret_sealed'),
    previousSecretExpiresAt: timestamp('previous_secret_expires_at', { withTimezone: true, precision: 3 }),
    /** The first failed attempt since the last success: 5 days of failures disable the endpoint. */
    failingSince: timestamp('failing_since', { withTimezone: true, precision: 3 }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index('webhook_endpoints_client_created_idx').on(t.clientId, t.createdAt, t.id)],
);

/** One delivery per (endpoint, event), with every attempt. */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: text('id').primaryKey(),
    clientId: clientId(),
    endpointId: text('endpoint_id').notNull().references(() => webhookEndpoints.id, { onDelete: 'cascade' }),
    eventId: text('event_id').notNull().references(() => events.id, { onDelete: 'cascade' }),
    eventType: text('event_type').notNull(),
    /** `pending`, `retrying`, `succeeded`, `failed`. */
    status: text('status').notNull().default('pending'),
    attempts: jsonb('attempts').$type<DeliveryAttempt[]>().notNull().default([]),
    attemptCount: integer('attempt_count').notNull().default(0),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true, precision: 3 }),
    /**
     * A dispatcher that claimed this delivery holds it until then (the attempt's timeout and a
     * margin); a worker killed mid-attempt leaves it to be claimed again after that.
     */
    lockedUntil: timestamp('locked_until', { withTimezone: true, precision: 3 }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    // The dispatchers' claim: due deliveries in order, from an index holding only the unsettled ones.
    index('webhook_deliveries_due_idx').on(t.nextAttemptAt).where(sql`status IN ('pending', 'retrying')`),
    uniqueIndex('webhook_deliveries_endpoint_event_key').on(t.endpointId, t.eventId),
    index('webhook_deliveries_endpoint_created_idx').on(t.clientId, t.endpointId, t.createdAt, t.id),
    index('webhook_deliveries_event_idx').on(t.eventId),
  ],
);

