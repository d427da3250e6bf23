import { sql } from 'drizzle-orm';
import { index, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { clientId, createdAt } from './columns.ts';
import { users } from './identity.ts';

export const invitations = pgTable(
  'invitations',
  {
    id: text('id').primaryKey(),
    clientId: clientId(),
    /** Lowercased: addresses match case-insensitively. */
    email: text('email').notNull(),
    role: text('role').notNull(),
    invitedBy: text('invited_by').notNull().references(() => users.id),
    /** `pending`, `accepted`, `cancelled`, or `expired` once a newer invitation replaced a lapsed one. */
    status: text('status').notNull().default('pending'),
    expiresAt: timestamp('expires_at', { withTimezone: true, precision: 3 }).notNull(),
    acceptedBy: text('accepted_by').references(() => users.id),
    acceptedAt: timestamp('accepted_at', { withTimezone: true, precision: 3 }),
    cancelledAt: timestamp('cancelled_at', { withTimezone: true, precision: 3 }),
    createdAt: createdAt(),
  },
  (t) => [
    index('invitations_client_created_idx').on(t.clientId, t.createdAt, t.id),
    // One open invitation per address and organization, even under concurrent requests.
    uniqueIndex('invitations_one_pending_key').on(t.clientId, t.email).where(sql`status = 'pending'`),
  ],
);

/** Mail of the `outbox` mailer: kept in the database (and logged) instead of sent. */
export const outboxEmails = pgTable('outbox_emails', {
  id: text('id').primaryKey(),
  to: text('to').notNull(),
  subject: text('subject').notNull(),
  text: text('text').notNull(),
  createdAt: createdAt(),
});
