import { sql } from 'drizzle-orm';
import { bigint, index, integer, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { clientId, createdAt, updatedAt } from './columns.ts';

export interface CampaignWindow {
  days: Array<'mon' | 'tue' | 'wed' | 'thu' | 'fri' | 'sat' | 'sun'>;
  /** `HH:MM`, wall clock in the campaign's time zone. */
  start: string;
  end: string;
}

/**
 * A campaign: a list of contacts called by the dialer (src/modules/campaigns/dialer.ts). The
 * progress counters are maintained in the same transactions that move contacts, so reading a
 * campaign never counts its contacts; they always add up to `total`.
 */
export const campaigns = pgTable(
  'campaigns',
  {
    id: text('id').primaryKey(),
    clientId: clientId(),
    name: text('name').notNull(),
    agentId: text('agent_id').notNull(),
    fromPhoneNumberId: text('from_phone_number_id').notNull(),
    status: text('status').notNull().default('draft'),
    timezone: text('timezone').notNull(),
    windows: jsonb('windows').$type<CampaignWindow[]>().notNull(),
    startAt: timestamp('start_at', { withTimezone: true, precision: 3 }),
    endAt: timestamp('end_at', { withTimezone: true, precision: 3 }),
    maxConcurrency: integer('max_concurrency').notNull(),
    callsPerMinute: integer('calls_per_minute').notNull(),
    retryMaxAttempts: integer('retry_max_attempts').notNull(),
    retryOn: jsonb('retry_on').$type<string[]>().notNull(),
    retryDelayMinutes: integer('retry_delay_minutes').notNull(),
    total: integer('total').notNull().default(0),
    pending: integer('pending').notNull().default(0),
    inProgress: integer('in_progress').notNull().default(0),
    completed: integer('completed').notNull().default(0),
    failed: integer('failed').notNull().default(0),
    retrying: integer('retrying').notNull().default(0),
    skipped: integer('skipped').notNull().default(0),
    /**
     * When the dialer started its most recent calls (epoch ms, at most `calls_per_minute` of them):
     * the sliding 60-second window of the pace rule, read and written under the campaign's row lock.
     */
    recentDials: jsonb('recent_dials').$type<number[]>().notNull().default([]),
    completedAt: timestamp('completed_at', { withTimezone: true, precision: 3 }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index('campaigns_client_created_idx').on(t.clientId, t.createdAt, t.id)],
);

/** One number to call in a campaign; `placement` guards the attempt in flight against a second dial. */
export const campaignContacts = pgTable(
  'campaign_contacts',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    campaignId: text('campaign_id').notNull().references(() => campaigns.id, { onDelete: 'cascade' }),
    clientId: clientId(),
    /** The row of the upload it came from (1 = the first contact; CSV: the first line after the header). */
    row: integer('row').notNull(),
    phoneNumber: text('phone_number').notNull(),
    variables: jsonb('variables').$type<Record<string, string>>().notNull().default({}),
    /** pending | in_progress | retrying | completed | failed | skipped */
    status: text('status').notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    callSids: jsonb('call_sids').$type<string[]>().notNull().default([]),
    /** The call of the attempt in flight (status in_progress). */
    currentCallSid: text('current_call_sid'),
    /** The attempt in flight: `queued` (its placement job is waiting), `placing` (the network call began), `placed`. */
    placement: text('placement'),
    /** The final status of the last call (completed, busy, no_answer, failed, canceled). */
    lastOutcome: text('last_outcome'),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true, precision: 3 }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('campaign_contacts_number_key').on(t.campaignId, t.phoneNumber),
    // The dialer's claims (pending in upload order, due retries) and the list's status filter.
    index('campaign_contacts_status_idx').on(t.campaignId, t.status, t.id),
    index('campaign_contacts_campaign_idx').on(t.campaignId, t.id),
    // A call that ends finds its contact (only contacts with an attempt in flight have one).
    index('campaign_contacts_current_call_idx').on(t.currentCallSid).where(sql`current_call_sid IS NOT NULL`),
  ],
);

/**
 * The contacts of an upload still arriving (src/modules/campaigns/service.ts), staged batch by batch
 * outside the campaign, then moved into campaign_contacts in one transaction once the whole body has
 * arrived and parsed: an upload cut short adds nothing. Its rows are deleted with the move, or when
 * the upload fails; the hourly cleanup deletes those of a process that died mid-upload. No foreign
 * keys: each would cost a lookup per staged row, and the move checks the campaign anyway.
 */
export const campaignContactStaging = pgTable(
  'campaign_contact_staging',
  {
    uploadId: text('upload_id').notNull(),
    clientId: text('client_id').notNull(),
    campaignId: text('campaign_id').notNull(),
    /** The upload's batches are moved in order, each with the room left in the campaign, as they were added before. */
    batch: integer('batch').notNull(),
    row: integer('row').notNull(),
    phoneNumber: text('phone_number').notNull(),
    variables: jsonb('variables').$type<Record<string, string>>().notNull(),
    stagedAt: timestamp('staged_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.uploadId, t.batch, t.row] })],
);

export const CONTACT_STATUSES = ['pending', 'in_progress', 'retrying', 'completed', 'failed', 'skipped'] as const;
