import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { AppError, Errors } from '../../core/errors.ts';
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
/**
 * Pay and Cancel are posts without a credential, reached from the page's own form: a post another
 * site makes the browser send is refused, so a page elsewhere cannot pay a checkout for the person
 * who opened it. Browsers say where a request comes from in Sec-Fetch-Site; older ones only in
 * Origin, which must then be the platform's (`null`, which any page can make a browser send, is not).
 * The page's no-referrer policy makes browsers send `Origin: null` even from the page itself, so
 * Sec-Fetch-Site, when present, decides.
 */
function refuseCrossSite(request: FastifyRequest, platformOrigin: string): void {
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined) {
    if (site !== 'same-origin' && site !== 'none') throw Errors.crossSiteRequest();
    return;
  }
  const origin = request.headers.origin;
  if (origin !== undefined && origin !== platformOrigin) throw Errors.crossSiteRequest();
}

export function checkoutRoutes(service: BillingService, urls: { successUrl: string; cancelUrl: string; publicBaseUrl: string }): FastifyPluginAsyncTypebox {
  const platformOrigin = new URL(urls.publicBaseUrl).origin;
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
      schema: { operationId: 'showCheckoutPage', tags, params: CheckoutPageParams, summary: 'Hosted checkout page of the local payment provider', response: { 200: html('The page'), 404: html('Unknown session') } },
    }, asPage(async (req, reply) => {
      const { session, status, organization } = await service.checkoutPage(req.params.session_id);
      return send(reply, 200, checkoutPage({ sessionId: session.id, organization, amountDollars: session.amountDollars, credits: session.credits, status, expiresAt: session.expiresAt }));
    }));

    app.post('/api/billing/checkout/:session_id/pay', {
      config,
      schema: { operationId: 'payCheckout', tags, params: CheckoutPageParams, summary: "Pay (local provider): the signed completion event goes through the webhook's path; once per session", response: { 200: html('Paid'), 403: html('Posted from another site'), 404: html('Unknown session'), 409: html('Not open') } },
    }, asPage(async (req, reply) => {
      refuseCrossSite(req as FastifyRequest, platformOrigin);
      const session = await service.payLocalCheckout(req.params.session_id);
      return send(reply, 200, resultPage('Payment complete', `${session.credits.toLocaleString('en-US')} credits were added.`, { href: urls.successUrl, text: 'Continue' }));
    }));

    app.post('/api/billing/checkout/:session_id/cancel', {
      config,
      schema: { operationId: 'cancelCheckout', tags, params: CheckoutPageParams, summary: 'Cancel (local provider): the session can no longer be paid', response: { 200: html('Cancelled'), 403: html('Posted from another site'), 404: html('Unknown session'), 409: html('Not open') } },
    }, asPage(async (req, reply) => {
      refuseCrossSite(req as FastifyRequest, platformOrigin);
      await service.cancelCheckout(req.params.session_id);
      return send(reply, 200, resultPage('Checkout cancelled', 'Nothing was charged.', { href: urls.cancelUrl, text: 'Back' }));
    }));

    app.get('/api/billing/checkout/return', {
      config,
      schema: { operationId: 'showCheckoutReturn',
        tags, querystring: Type.Object({ result: Type.Optional(Type.String({ maxLength: 20 })) }),
        summary: 'Where the provider sends the payer back; it shows a message and credits nothing (credits come from verified events)',
        response: { 200: html('The page') },
      },
    }, async (req, reply) => send(reply, 200, req.query.result === 'cancelled'
      ? resultPage('Checkout cancelled', 'Nothing was charged.')
      : resultPage('Thank you', 'Your balance is updated as soon as the payment provider confirms the payment.')));
  };
}
