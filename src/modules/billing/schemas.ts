import { Type } from 'typebox';
import { pageQuery, PathId, Timestamp } from '../../core/schemas.ts';

export const MIN_PURCHASE_DOLLARS = 5;
export const MAX_PURCHASE_DOLLARS = 10_000;
export const CHECKOUT_LIFETIME_MS = 24 * 3600_000;

export const PurchaseBody = Type.Object(
  { amount: Type.Integer({ minimum: MIN_PURCHASE_DOLLARS, maximum: MAX_PURCHASE_DOLLARS, description: 'Whole dollars, 5 to 10000' }) },
  { title: 'PurchaseBody', additionalProperties: false },
);

export const PurchaseHeaders = Type.Object({
  'x-organization-id': Type.Optional(Type.String({ description: 'Organization the request acts in (required)' })),
  'idempotency-key': Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'The same key returns the same session; with another amount it is 409' })),
});

/** The specification's bare checkout object. */
export const CheckoutSession = Type.Object({
  checkout_url: Type.String(),
  session_id: Type.String(),
  credits_to_receive: Type.Integer(),
}, { title: 'CheckoutSession' });

export const Credits = Type.Object({
  balance: Type.Number({ description: 'Credits available' }),
  credits_per_dollar: Type.Integer(),
}, { title: 'Credits' });

export const Transaction = Type.Object({
  transaction_id: Type.String(),
  kind: Type.Enum(['purchase', 'call_usage', 'adjustment']),
  amount: Type.Number({ description: 'Signed: credits added (+) or taken (−)' }),
  balance_after: Type.Number(),
  source_id: Type.String({ description: 'The checkout session, call or adjustment that moved the credits' }),
  description: Type.String(),
  created_at: Timestamp,
}, { title: 'Transaction' });

export const ListTransactionsQuery = Type.Object(pageQuery(50), { additionalProperties: false });

export const CheckoutPageParams = Type.Object({ session_id: PathId('cs_ + 12 hex') });

export const WebhookReceipt = Type.Object({ received: Type.Boolean(), applied: Type.Boolean(), detail: Type.String() }, { title: 'WebhookReceipt' });

export const BillingSettings = Type.Object({
  low_balance_threshold: Type.Number({ minimum: 0, description: 'credits.low is emitted when the balance falls below this many credits (default 100)' }),
}, { title: 'BillingSettings' });

export const UpdateBillingSettingsBody = Type.Object({
  low_balance_threshold: Type.Number({ minimum: 0, maximum: 1_000_000_000_000 }),
}, { title: 'UpdateBillingSettingsBody', additionalProperties: false });
