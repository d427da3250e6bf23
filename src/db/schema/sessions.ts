import { index, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { createdAt } from './columns.ts';

/**
 * E-mail sign-in links of the embedded identity provider: only the SHA-256 of the token is kept, so
 * the table holds no usable link. A link is used at most once (`used_at`) and lives 15 minutes.
 */
export const signInLinks = pgTable(
  'sign_in_links',
  {
    id: text('id').primaryKey(),
    /** Lowercased address the link was sent to. */
    email: text('email').notNull(),
    tokenHash: text('token_hash').notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true, precision: 3 }).notNull(),
    usedAt: timestamp('used_at', { withTimezone: true, precision: 3 }),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('sign_in_links_token_hash_key').on(t.tokenHash), index('sign_in_links_email_created_idx').on(t.email, t.createdAt)],
);

/**
 * Console sessions: the refresh credential behind the httpOnly cookie (its SHA-256 only). Signing
 * out or an expired session ends the refreshes; access tokens are short-lived JWTs.
 */
export const userSessions = pgTable(
  'user_sessions',
  {
    id: text('id').primaryKey(),
    email: text('email').notNull(),
    /** The token subject the session's access tokens carry. */
    subject: text('subject').notNull(),
    refreshHash: text('refresh_hash').notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true, precision: 3 }).notNull(),
    revokedAt: timestamp('revoked_at', { withTimezone: true, precision: 3 }),
    lastRefreshedAt: timestamp('last_refreshed_at', { withTimezone: true, precision: 3 }),
    createdAt: createdAt(),
  },
  (t) => [index('user_sessions_email_idx').on(t.email)],
);
