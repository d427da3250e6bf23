import { index, jsonb, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';
import { clientId } from './columns.ts';

/**
 * Who changed what (extensions.md §6): one row per change, written in the transaction of the change.
 * Secrets never appear here: `changed_fields` names fields, it never holds their values.
 */
export const auditLogs = pgTable(
  'audit_logs',
  {
    id: text('id').notNull(),
    clientId: clientId(),
    at: timestamp('at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    actorType: text('actor_type').notNull(),
    actorId: text('actor_id').notNull(),
    actorLabel: text('actor_label'),
    action: text('action').notNull(),
    resourceType: text('resource_type').notNull(),
    resourceId: text('resource_id').notNull(),
    changedFields: jsonb('changed_fields').$type<string[]>().notNull().default([]),
    ip: text('ip'),
    userAgent: text('user_agent'),
    requestId: text('request_id'),
  },
  // The list's order is the key: no index of the id alone, which nothing reads and every change
  // would write (an entry is one of the costs of every write: issue 19's layer benchmark).
  (t) => [
    primaryKey({ name: 'audit_logs_pkey', columns: [t.clientId, t.at, t.id] }),
    index('audit_logs_client_resource_idx').on(t.clientId, t.resourceType, t.resourceId, t.at),
  ],
);
