import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { AppError } from '../../core/errors.ts';
import { CheckoutPageParams } from './schemas.ts';
import { checkoutPage, resultPage } from './checkout-page.ts';
import type { BillingService } from './service.ts';

const tags = ['Billing'];
const html = (description: string) => ({ description, content: { 'text/html': { schema: { type: 'string' } } } });

/**
 * The local provider's hosted checkout: a page with Pay and Cancel. Pay sends a signed
 * `checkout.session.completed` event through the webhook path, as a real provider would.
 * No credentials: like a provider's page, it is reached by its link.
 */
export function checkoutRoutes(service: BillingService, urls: { successUrl: string; cancelUrl: string }): FastifyPluginAsyncTypebox {
  const send = (reply: FastifyReply, status: number, body: string) => reply.status(status).type('text/html; charset=utf-8').send(body);
  /** A page handler whose refusals (404, 409...) are pages too, not JSON. */
  const asPage = <R extends { params: { session_id: string } }>(render: (req: R, reply: FastifyReply) => Promise<unknown>) =>
    async (req: R, reply: FastifyReply) => {
      try {
        return await render(req, reply);
      } catch (err) {
        if (!(err instanceof AppError) || err.status >= 500) throw err;
        return send(reply, err.status, resultPage(err.status === 409 ? 'Checkout closed' : 'Checkout unavailable', err.detail));
      }
    };
  return async (app) => {
    // The page's forms post url-encoded bodies that carry nothing the routes read.
    app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 1024 }, (_req, _body, done) => done(null, undefined));
    const config = { auth: 'public' as const };

    app.get('/api/billing/checkout/:session_id', {
      config,
      schema: { tags, params: CheckoutPageParams, summary: 'Hosted checkout page of the local payment provider', response: { 200: html('The page'), 404: html('Unknown session') } },
    }, asPage(async (req, reply) => {
      const { session, status, organization } = await service.checkoutPage(req.params.session_id);
      return send(reply, 200, checkoutPage({ sessionId: session.id, organization, amountDollars: session.amountDollars, credits: session.credits, status, expiresAt: session.expiresAt }));
    }));

    app.post('/api/billing/checkout/:session_id/pay', {
      config,
      schema: { tags, params: CheckoutPageParams, summary: "Pay (local provider): the signed completion event goes through the webhook's path; once per session", response: { 200: html('Paid'), 404: html('Unknown session'), 409: html('Not open') } },
    }, asPage(async (req, reply) => {
      const session = await service.payLocalCheckout(req.params.session_id);
      return send(reply, 200, resultPage('Payment complete', `${session.credits.toLocaleString('en-US')} credits were added.`, { href: urls.successUrl, text: 'Continue' }));
    }));

    app.post('/api/billing/checkout/:session_id/cancel', {
      config,
      schema: { tags, params: CheckoutPageParams, summary: 'Cancel (local provider): the session can no longer be paid', response: { 200: html('Cancelled'), 404: html('Unknown session'), 409: html('Not open') } },
    }, asPage(async (req, reply) => {
      await service.cancelCheckout(req.params.session_id);
      return send(reply, 200, resultPage('Checkout cancelled', 'Nothing was charged.', { href: urls.cancelUrl, text: 'Back' }));
    }));

    app.get('/api/billing/checkout/return', {
      config,
      schema: {
        tags, querystring: Type.Object({ result: Type.Optional(Type.String({ maxLength: 20 })) }),
        summary: 'Where the provider sends the payer back; it shows a message and credits nothing (credits come from verified events)',
        response: { 200: html('The page') },
      },
    }, async (req, reply) => send(reply, 200, req.query.result === 'cancelled'
      ? resultPage('Checkout cancelled', 'Nothing was charged.')
      : resultPage('Thank you', 'Your balance is updated as soon as the payment provider confirms the payment.')));
  };
}
