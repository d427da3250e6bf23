import { bigint, index, integer, pgSequence, pgTable, primaryKey, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { sql } from 'drizzle-orm';

const timestamps = {
  createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
};

export const organizations = pgTable('organizations', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  /** Calls not yet final the organization may have at once (extensions.md §6); set by the operator (`org:limits`). */
  maxConcurrentCalls: integer('max_concurrent_calls').notNull().default(10),
  ...timestamps,
});

export const users = pgTable(
  'users',
  {
    id: text('id').primaryKey(),
    /** The identity provider's `sub`; null for users made by the CLI or bootstrap until they sign in. */
    subject: text('subject'),
    email: text('email'),
    ...timestamps,
  },
  (t) => [uniqueIndex('users_subject_key').on(t.subject), index('users_email_idx').on(t.email)],
);

export const memberships = pgTable(
  'memberships',
  {
    clientId: text('client_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    role: text('role').notNull(),
    ...timestamps,
  },
  (t) => [primaryKey({ columns: [t.clientId, t.userId] }), index('memberships_user_idx').on(t.userId)],
);

export const apiKeys = pgTable(
  'api_keys',
  {
    id: text('id').primaryKey(),
    clientId: text('client_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    name: text('name').notNull(),
    role: text('role').notNull(),
    prefix: text('prefix').notNull(),
    /** SHA-256 (hex) of the full key; the key itself is never stored. */
    keyHash: text('key_hash').notNull(),
    status: text('status').notNull().default('active'),
    createdAt: timestamps.createdAt,
    lastUsedAt: timestamp('last_used_at', { withTimezone: true, precision: 3 }),
    expiresAt: timestamp('expires_at', { withTimezone: true, precision: 3 }),
    revokedAt: timestamp('revoked_at', { withTimezone: true, precision: 3 }),
    /** Permissions the key is narrowed to (extensions.md §6); empty = everything its role holds. */
    scopes: text('scopes').array().notNull().default(sql`'{}'::text[]`),
    /** Networks (CIDR) the key is accepted from; empty = anywhere. */
    allowedIps: text('allowed_ips').array().notNull().default(sql`'{}'::text[]`),
  },
  (t) => [
    uniqueIndex('api_keys_key_hash_key').on(t.keyHash),
    // Ascending, scanned backward for the newest-first keyset order (created_at DESC, id DESC).
    index('api_keys_client_created_idx').on(t.clientId, t.createdAt, t.id),
  ],
);

/**
 * Server processes that cache API-key lookups (src/modules/api-keys/credential-cache.ts). A revocation
 * is acknowledged by every live listener before the revoking request answers, so no process accepts
 * a revoked key on the next request. `seen_seq` is the last revocation the process has applied.
 */
export const credentialListeners = pgTable('credential_listeners', {
  id: text('id').primaryKey(),
  seenSeq: bigint('seen_seq', { mode: 'number' }).notNull(),
  heartbeatAt: timestamp('heartbeat_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
});

/** Numbers every revocation, so listeners can acknowledge the ones they have applied. */
export const credentialRevocations = pgSequence('credential_revocations');
