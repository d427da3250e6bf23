import { index, integer, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';

const at = (name: string) => timestamp(name, { withTimezone: true, precision: 3 });

/**
 * Idempotency keys (src/core/http/idempotency.ts): one row per organization, credential and key.
 * `running` while the first request runs (the row is its lock, `lock_id` the holder), then
 * `completed` with the response kept until `expires_at` (24 hours); a 5xx deletes the row.
 */
export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    // The organization, without a foreign key: a key is a 24-hour record of a response, not data the
    // organization owns, and its id comes from authentication. A reference made every claim, in a
    // transaction of its own, take a key-share lock on the organization's row, the row every
    // concurrent write of the organization locks too.
    clientId: text('client_id').notNull(),
    /** The API key's id, or the user's id for a bearer token. */
    credentialId: text('credential_id').notNull(),
    key: text('key').notNull(),
    /** SHA-256 of method, path and body (see the plugin for streamed bodies). */
    fingerprint: text('fingerprint').notNull(),
    status: text('status').notNull(),
    lockId: text('lock_id').notNull(),
    lockedAt: at('locked_at').notNull(),
    responseStatus: integer('response_status'),
    responseContentType: text('response_content_type'),
    responseBody: text('response_body'),
    createdAt: at('created_at').notNull(),
    expiresAt: at('expires_at').notNull(),
  },
  // The daily cleanup job's index. BRIN: a key's expiry is its creation plus 24 hours, so keys are
  // written in expiry order; once cleanups have freed space, new keys fill it and a block range holds
  // about a day's mix, so the cleanup reads most of the table, of which it deletes about half anyway.
  // Unlike a btree it costs a keyed write next to nothing to maintain (bench/layers.ts).
  (t) => [primaryKey({ columns: [t.clientId, t.credentialId, t.key] }), index('idempotency_keys_expires_brin').using('brin', t.expiresAt)],
);
