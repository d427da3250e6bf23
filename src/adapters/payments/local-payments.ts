import { createHmac, randomBytes } from 'node:crypto';
import {
  InvalidSignatureError, SIGNATURE_TOLERANCE_SECONDS, toPaymentEvent,
  type CheckoutRequest, type PaymentEvent, type PaymentProvider, type ProviderCheckout,
} from './payment-provider.ts';

/**
 * The default provider: a checkout page served by the platform itself (no money moves; for local
 * installs, demos and tests). Paying on that page produces an event shaped and signed like a
 * Stripe webhook, with a secret of this installation, and it is applied through the same path.
 */
export class LocalPayments implements PaymentProvider {
  readonly kind = 'local' as const;
  readonly hostedPage = { paidEvent: (session: { id: string; amountDollars: number }) => this.paidEvent(session) };
  /** Stripe's webhook helpers (signing and verifying its format), loaded on first use: most processes never pay. */
  #stripe: Promise<typeof import('stripe').default> | undefined;
  readonly #publicBaseUrl: string;
  readonly #secret: string;
  constructor(publicBaseUrl: string, platformSecret: Buffer) {
    this.#publicBaseUrl = publicBaseUrl;
    this.#secret = `whsec_${createHmac('sha256', platformSecret).update('switchboard/local-payments/v1').digest('base64url')}`;
  }

  async createCheckout(request: CheckoutRequest): Promise<ProviderCheckout> {
    return { providerSessionId: request.sessionId, url: `${this.#publicBaseUrl}/api/billing/checkout/${request.sessionId}` };
  }

  /** The signed `checkout.session.completed` event the Pay button sends. */
  async paidEvent(session: { id: string; amountDollars: number }): Promise<{ body: string; signature: string }> {
    const Stripe = await this.#sdk();
    const body = JSON.stringify({
      id: `evt_local_${randomBytes(8).toString('hex')}`,
      object: 'event',
      type: 'checkout.session.completed',
      created: Math.floor(Date.now() / 1000),
      data: { object: { id: session.id, object: 'checkout.session', payment_status: 'paid', amount_total: session.amountDollars * 100, currency: 'usd' } },
    });
    return { body, signature: Stripe.webhooks.generateTestHeaderString({ payload: body, secret: this.#secret }) };
  }

  async verifyEvent(rawBody: Buffer, signature: string | undefined): Promise<PaymentEvent> {
    if (!signature) throw new InvalidSignatureError('The Stripe-Signature header is missing');
    const Stripe = await this.#sdk();
    try {
      return toPaymentEvent(Stripe.webhooks.constructEvent(rawBody, signature, this.#secret, SIGNATURE_TOLERANCE_SECONDS) as never);
    } catch (err) {
      throw new InvalidSignatureError((err as Error).message);
    }
  }

  #sdk(): Promise<typeof import('stripe').default> {
    this.#stripe ??= import('stripe').then((module) => module.default);
    return this.#stripe;
  }
}
