import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ORG_ROUTE_ERRORS, envelope, errorResponses, listEnvelope, OrganizationHeader, pageBody } from '../../core/schemas.ts';
import { BillingSettings, CheckoutSession, Credits, UpdateBillingSettingsBody, ListTransactionsQuery, PurchaseBody, PurchaseHeaders, Transaction, WebhookReceipt } from './schemas.ts';
import type { BillingService } from './service.ts';
import { checkoutRoutes } from './checkout-routes.ts';

const tags = ['Billing'];

export function billingRoutes(service: BillingService, urls: { successUrl: string; cancelUrl: string; publicBaseUrl: string }): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get('/api/billing/credits', {
      config: { permission: 'billing:read' },
      schema: { operationId: 'getCredits',
        tags, headers: OrganizationHeader, summary: "The organization's credit balance and the credits a dollar buys",
        response: { 200: envelope(Credits), ...errorResponses(...ORG_ROUTE_ERRORS) },
      },
    }, async (req) => ({ success: true, data: await service.credits(req.ctx) }));

    app.get('/api/billing/transactions', {
      config: { permission: 'billing:read' },
      schema: { operationId: 'listTransactions',
        tags, headers: OrganizationHeader, querystring: ListTransactionsQuery,
        summary: 'The credits ledger, newest first: purchases (+), call usage (−), adjustments',
        response: { 200: listEnvelope(Transaction), ...errorResponses(...ORG_ROUTE_ERRORS) },
      },
    }, async (req) => pageBody(await service.transactions(req.ctx, req.query)));

    app.get('/api/billing/settings', {
      config: { permission: 'billing:settings' },
      schema: { operationId: 'getBillingSettings',
        tags, headers: OrganizationHeader, summary: 'Billing settings (admin): the low-balance threshold of credits.low',
        response: { 200: envelope(BillingSettings), ...errorResponses(...ORG_ROUTE_ERRORS) },
      },
    }, async (req) => ({ success: true, data: await service.settings(req.ctx) }));

    app.patch('/api/billing/settings', {
      config: { permission: 'billing:settings' },
      schema: { operationId: 'updateBillingSettings',
        tags, headers: OrganizationHeader, body: UpdateBillingSettingsBody, summary: 'Change the billing settings (admin)',
        response: { 200: envelope(BillingSettings), ...errorResponses(...ORG_ROUTE_ERRORS) },
      },
    }, async (req) => ({ success: true, message: 'Billing settings updated', data: await service.updateSettings(req.ctx, req.body) }));

    app.post('/api/billing/credits/purchase', {
      // Concurrent purchases with one key wait for the first and get its session (not 409 in_use).
      config: { permission: 'billing:purchase', idempotency: 'wait' },
      schema: { operationId: 'purchaseCredits',
        tags, headers: PurchaseHeaders, body: PurchaseBody,
        summary: 'Open a hosted checkout for credits (admin): the bare {checkout_url, session_id, credits_to_receive}; credits arrive when the provider reports the payment',
        response: { 200: CheckoutSession, ...errorResponses(...ORG_ROUTE_ERRORS, 409, 502) },
      },
    }, async (req) => service.purchase(req.ctx, req.body.amount, req.headers['idempotency-key']));

    // The provider signs the exact bytes it sends, so this route reads the body raw.
    await app.register(async (raw) => {
      raw.removeContentTypeParser('application/json');
      raw.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: 1024 * 1024 }, (_req, body, done) => done(null, body));
      raw.post('/api/billing/webhook', {
        config: { auth: 'public' },
        schema: { operationId: 'receivePaymentEvent',
          tags, headers: Type.Object({ 'stripe-signature': Type.Optional(Type.String()) }),
          summary: "Payment provider events (Stripe's format, Stripe-Signature verified on the raw body, 300 s tolerance); each event is applied once",
          body: {
            title: 'PaymentProviderEvent', description: 'The event, as the provider sent it (Stripe\'s format)',
            examples: [{ id: 'evt_1Q2w3E4r5T6y', object: 'event', type: 'checkout.session.completed', data: { object: { id: 'cs_a1b2c3d4e5f6', payment_status: 'paid', amount_total: 2000, currency: 'usd' } } }],
          } as never,
          response: { 200: envelope(WebhookReceipt), ...errorResponses(400, 409, 500) },
        },
      }, async (req) => ({ success: true, data: await service.handleWebhook(req.body as Buffer, req.headers['stripe-signature'] as string | undefined) }));
    });

    await app.register(checkoutRoutes(service, urls));
  };
}
