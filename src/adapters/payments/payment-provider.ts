/** What the platform needs of a payment provider: a hosted checkout, and verified events about it. */
export interface CheckoutRequest {
  sessionId: string;
  orgId: string;
  amountDollars: number;
  credits: number;
  expiresAt: Date;
  /** Makes a retried request create the provider's session once. */
  idempotencyKey: string;
}

export interface ProviderCheckout {
  providerSessionId: string;
  url: string;
}

/** A provider event, verified, reduced to what billing acts on. */
export interface PaymentEvent {
  id: string;
  type: string;
  /** The provider's session id, for checkout events. */
  providerSessionId: string | undefined;
  /** `paid`, `unpaid`, `no_payment_required` (Stripe's payment_status). */
  paymentStatus: string | undefined;
  /** Smallest currency unit (cents). */
  amountTotal: number | undefined;
  currency: string | undefined;
}

export interface PaymentProvider {
  readonly kind: 'local' | 'stripe';
  createCheckout(request: CheckoutRequest): Promise<ProviderCheckout>;
  /** Verifies the signature over the raw body (300 s tolerance); throws InvalidSignatureError. */
  verifyEvent(rawBody: Buffer, signature: string | undefined): Promise<PaymentEvent>;
  /** Present when the platform serves the checkout page itself (the local provider). */
  readonly hostedPage?: HostedCheckoutPage;
}

/** A checkout page served by the platform: its Pay button produces the provider's signed completion event. */
export interface HostedCheckoutPage {
  paidEvent(session: { id: string; amountDollars: number }): Promise<{ body: string; signature: string }>;
}

export class InvalidSignatureError extends Error {
  override name = 'InvalidSignatureError';
}

export class PaymentProviderError extends Error {
  override name = 'PaymentProviderError';
}

/** Signed events older than this are refused (replays). */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

interface StripeLikeEvent {
  id: string;
  type: string;
  data: { object: { id?: string; payment_status?: string; amount_total?: number | null; currency?: string | null } };
}

export function toPaymentEvent(event: StripeLikeEvent): PaymentEvent {
  const object = event.data.object;
  return {
    id: event.id, type: event.type, providerSessionId: object.id, paymentStatus: object.payment_status,
    amountTotal: object.amount_total ?? undefined, currency: object.currency ?? undefined,
  };
}
