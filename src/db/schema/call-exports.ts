import { bigint, boolean, index, integer, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import { clientId, createdAt } from './columns.ts';

const at = (name: string) => timestamp(name, { withTimezone: true, precision: 3 });

/**
 * An export of calls (extensions.md §4): the list's filters as the request gave them, worked by the
 * `call-export` job, which streams the file to the object store under `object_key`. Kept 7 days
 * (`expires_at`), then the cleanup job deletes the object and the row.
 */
export const callExports = pgTable(
  'call_exports',
  {
    id: text('id').primaryKey(),
    clientId: clientId(),
    /** `csv` or `jsonl`. */
    format: text('format').notNull(),
    includeTranscript: boolean('include_transcript').notNull().default(false),
    /** The request's filter fields (`metadata.<key>` included), read again by the job with the list's translation. */
    filters: jsonb('filters').$type<Record<string, unknown>>().notNull(),
    /** pending → running → completed | failed. */
    status: text('status').notNull().default('pending'),
    rowCount: integer('row_count'),
    bytes: bigint('bytes', { mode: 'number' }),
    objectKey: text('object_key'),
    error: text('error'),
    createdAt: createdAt(),
    startedAt: at('started_at'),
    completedAt: at('completed_at'),
    expiresAt: at('expires_at').notNull(),
  },
  (t) => [index('call_exports_client_idx').on(t.clientId, t.id), index('call_exports_expires_idx').on(t.expiresAt)],
);
