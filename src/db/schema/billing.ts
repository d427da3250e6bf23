import { sql } from 'drizzle-orm';
import { check, index, integer, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { clientId, createdAt, updatedAt } from './columns.ts';
import { credits } from './calls.ts';

/** One balance per organization; the check makes an overdraft impossible whatever the code does. */
export const creditAccounts = pgTable(
  'credit_accounts',
  {
    clientId: clientId().primaryKey(),
    balance: credits('balance').notNull().default(0),
    /** `credits.low` is emitted when the balance falls below this (extensions.md §1). */
    lowBalanceThreshold: credits('low_balance_threshold').notNull().default(100),
    updatedAt: updatedAt(),
  },
  (t) => [check('credit_accounts_balance_nonnegative', sql`${t.balance} >= 0`)],
);

/**
 * The credits ledger: one row per movement, signed. A source event (a call, a payment) moves
 * credits at most once: `(client_id, kind, source_id)` is unique (call sids are unique per
 * organization only, so two organizations' calls may share a source id).
 */
export const creditTransactions = pgTable(
  'credit_transactions',
  {
    id: text('id').primaryKey(),
    clientId: clientId(),
    /** `purchase`, `call_usage`, `adjustment`. */
    kind: text('kind').notNull(),
    amount: credits('amount').notNull(),
    balanceAfter: credits('balance_after').notNull(),
    sourceId: text('source_id').notNull(),
    description: text('description').notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    index('credit_transactions_client_created_idx').on(t.clientId, t.createdAt, t.id),
    uniqueIndex('credit_transactions_source_key').on(t.clientId, t.kind, t.sourceId),
  ],
);

/** A checkout started by an admin; credited once, when the provider reports it paid. */
export const checkoutSessions = pgTable(
  'checkout_sessions',
  {
    id: text('id').primaryKey(),
    clientId: clientId(),
    /** `local` or `stripe`. */
    provider: text('provider').notNull(),
    /** The provider's id of the session (the local provider uses ours). */
    providerSessionId: text('provider_session_id').notNull(),
    checkoutUrl: text('checkout_url').notNull(),
    amountDollars: integer('amount_dollars').notNull(),
    credits: integer('credits').notNull(),
    /** `open`, `completed`, `cancelled`, `expired`. */
    status: text('status').notNull().default('open'),
    idempotencyKey: text('idempotency_key'),
    createdBy: text('created_by').notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true, precision: 3 }).notNull(),
    completedAt: timestamp('completed_at', { withTimezone: true, precision: 3 }),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('checkout_sessions_provider_session_key').on(t.provider, t.providerSessionId),
    uniqueIndex('checkout_sessions_idempotency_key').on(t.clientId, t.idempotencyKey).where(sql`idempotency_key IS NOT NULL`),
  ],
);

/** Provider events already handled: a redelivered event is recognised and changes nothing. */
export const paymentEvents = pgTable('payment_events', {
  id: text('id').primaryKey(),
  provider: text('provider').notNull(),
  type: text('type').notNull(),
  sessionId: text('session_id'),
  outcome: text('outcome').notNull(),
  receivedAt: timestamp('received_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
});
