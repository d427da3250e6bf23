import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StripeRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  form: URLSearchParams;
}

/**
 * A local stand-in of the Stripe API (what the SDK calls for Checkout): form-encoded requests,
 * JSON answers in Stripe's shapes. `fail` makes the next answers errors.
 */
export async function startStripeStandIn() {
  const requests: StripeRequest[] = [];
  const state = { fail: false };
  let counter = 0;
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => { body += c.toString('utf8'); });
    req.on('end', () => {
      const form = new URLSearchParams(body);
      requests.push({ method: req.method!, path: req.url!, headers: req.headers, form });
      res.setHeader('content-type', 'application/json');
      if (state.fail) {
        res.statusCode = 500;
        res.end(JSON.stringify({ error: { type: 'api_error', message: 'stand-in failure' } }));
        return;
      }
      if (req.method === 'POST' && req.url === '/v1/checkout/sessions') {
        const id = `cs_test_standin${++counter}${Date.now()}`;
        res.end(JSON.stringify({
          id, object: 'checkout.session', mode: form.get('mode'), status: 'open', payment_status: 'unpaid',
          amount_total: Number(form.get('line_items[0][price_data][unit_amount]')), currency: 'usd',
          url: `https://checkout.stripe.test/c/pay/${id}`, metadata: {},
        }));
        return;
      }
      res.statusCode = 404;
      res.end(JSON.stringify({ error: { type: 'invalid_request_error', message: 'Unrecognized request URL' } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, requests, state, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
