import { boolean, integer, pgTable } from 'drizzle-orm/pg-core';
import { clientId, updatedAt } from './columns.ts';

/**
 * An organization's data policy (extensions.md §7). No row means the defaults: keep everything,
 * store transcripts as reported.
 */
export const dataSettings = pgTable('data_settings', {
  clientId: clientId().primaryKey(),
  /** Days a transcript is kept after its call ended; null keeps it. */
  transcriptRetentionDays: integer('transcript_retention_days'),
  /** Days a recording is kept after its call ended; null keeps it. */
  recordingRetentionDays: integer('recording_retention_days'),
  redactPii: boolean('redact_pii').notNull().default(false),
  updatedAt: updatedAt(),
});
