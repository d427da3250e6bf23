import Stripe from 'stripe';
import {
  InvalidSignatureError, PaymentProviderError, SIGNATURE_TOLERANCE_SECONDS, toPaymentEvent,
  type CheckoutRequest, type PaymentEvent, type PaymentProvider, type ProviderCheckout,
} from './payment-provider.ts';

export interface StripeOptions {
  secretKey: string;
  webhookSecret: string;
  /** The API's address (a stand-in in tests); Stripe's own by default. */
  apiUrl: string | undefined;
  successUrl: string;
  cancelUrl: string;
  timeoutMs: number;
}

/** Stripe Checkout through the official SDK; events verified with `constructEvent`. */
export class StripePayments implements PaymentProvider {
  readonly kind = 'stripe' as const;
  readonly #stripe: Stripe;
  readonly #options: StripeOptions;
  constructor(options: StripeOptions) {
    this.#options = options;
    const api = options.apiUrl ? new URL(options.apiUrl) : undefined;
    this.#stripe = new Stripe(options.secretKey, {
      timeout: options.timeoutMs,
      maxNetworkRetries: 1,
      ...(api ? { host: api.hostname, port: api.port || (api.protocol === 'https:' ? 443 : 80), protocol: api.protocol.replace(':', '') as 'http' | 'https' } : {}),
    });
  }

  async createCheckout(request: CheckoutRequest): Promise<ProviderCheckout> {
    try {
      const session = await this.#stripe.checkout.sessions.create({
        mode: 'payment',
        line_items: [{
          quantity: 1,
          price_data: { currency: 'usd', unit_amount: request.amountDollars * 100, product_data: { name: `${request.credits} Switchboard credits` } },
        }],
        client_reference_id: request.orgId,
        metadata: { organization_id: request.orgId, session_id: request.sessionId, credits: String(request.credits) },
        success_url: this.#options.successUrl,
        cancel_url: this.#options.cancelUrl,
        expires_at: Math.floor(request.expiresAt.getTime() / 1000),
      }, { idempotencyKey: request.idempotencyKey });
      if (!session.url) throw new PaymentProviderError('Stripe returned a session without a URL');
      return { providerSessionId: session.id, url: session.url };
    } catch (err) {
      if (err instanceof PaymentProviderError) throw err;
      throw new PaymentProviderError(`Stripe refused the checkout session: ${(err as Error).message}`);
    }
  }

  async verifyEvent(rawBody: Buffer, signature: string | undefined): Promise<PaymentEvent> {
    if (!signature) throw new InvalidSignatureError('The Stripe-Signature header is missing');
    try {
      const event = this.#stripe.webhooks.constructEvent(rawBody, signature, this.#options.webhookSecret, SIGNATURE_TOLERANCE_SECONDS);
      return toPaymentEvent(event as never);
    } catch (err) {
      throw new InvalidSignatureError((err as Error).message);
    }
  }
}
