import { text, timestamp } from 'drizzle-orm/pg-core';
import { organizations } from './identity.ts';

/** Columns every organization-owned table shares. */
export const createdAt = () => timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow();
export const updatedAt = () => timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull().defaultNow();
export const clientId = () =>
  text('client_id')
    .notNull()
    .references(() => organizations.id, { onDelete: 'cascade' });
