import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import Stripe from 'stripe';
import { LocalPayments } from '../src/adapters/payments/local-payments.ts';
import { runAuthMatrix } from './helpers/auth-matrix.ts';
import { TEST_ENCRYPTION_KEY, TEST_JWT_SECRET, testConfig, testEnv, buildTestApp } from './helpers/env.ts';
import { asRole, createAgent, createOrg, type TestOrg } from './helpers/fixtures.ts';
import { balanceOf, createCall, grantCredits, patchCall } from './helpers/calls.ts';
import { setConcurrencyLimit } from './helpers/limits.ts';
import { startStripeStandIn } from './helpers/stripe-standin.ts';

runAuthMatrix({ method: 'GET', route: '/api/billing/credits', path: () => '/api/billing/credits', permission: 'billing:read' });
runAuthMatrix({ method: 'GET', route: '/api/billing/transactions', path: () => '/api/billing/transactions', permission: 'billing:read' });
runAuthMatrix({ method: 'POST', route: '/api/billing/credits/purchase', path: () => '/api/billing/credits/purchase', body: () => ({ amount: 10 }), permission: 'billing:purchase' });

async function purchase(org: TestOrg, amount: number, extra: Record<string, string> = {}, app?: FastifyInstance) {
  const target = app ?? (await testEnv()).app;
  return target.inject({ method: 'POST', url: '/api/billing/credits/purchase', headers: asRole(org, 'admin', extra), payload: { amount } });
}

const local = (url: string) => url.replace(/^https?:\/\/[^/]+/, '');
const form = { 'content-type': 'application/x-www-form-urlencoded' };

describe('billing: purchase and the local checkout', () => {
  test('purchase returns the bare checkout object; credits_to_receive = amount × 100; 5 to 10000 whole dollars', async () => {
    const org = await createOrg();
    const res = await purchase(org, 25);
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.deepEqual(Object.keys(body).sort(), ['checkout_url', 'credits_to_receive', 'session_id']);
    assert.match(body.session_id, /^cs_[a-f0-9]{12}$/);
    assert.equal(body.credits_to_receive, 2500);
    assert.equal(body.checkout_url, `http://127.0.0.1:3000/api/billing/checkout/${body.session_id}`);
    for (const amount of [4, 10_001, 7.5, 0, -5]) assert.equal((await purchase(org, amount)).statusCode, 400, String(amount));
    assert.equal((await purchase(org, 5)).statusCode, 200);
    assert.equal((await purchase(org, 10_000)).json().credits_to_receive, 1_000_000);
  });

  test('Idempotency-Key: the same key returns the same session, also concurrently; another amount → 409', async () => {
    const org = await createOrg();
    const key = { 'idempotency-key': `buy-${Date.now()}` };
    const results = await Promise.all(Array.from({ length: 5 }, () => purchase(org, 50, key)));
    const ids = new Set(results.map((r) => r.json().session_id));
    assert.equal(ids.size, 1);
    assert.equal((await purchase(org, 50, key)).json().session_id, [...ids][0]);
    const other = await purchase(org, 60, key);
    assert.equal(other.statusCode, 409);
    assert.equal(other.json().code, 'idempotency_key_reused');
    assert.notEqual((await purchase(org, 50)).json().session_id, [...ids][0], 'no key: a new session');
  });

  test('the hosted page shows organization, amount and credits; Pay credits once; the balance and ledger change once', async () => {
    const { app, database } = await testEnv();
    const org = await createOrg('Acme <Plumbing> & Sons');
    const checkout = (await purchase(org, 10)).json();
    const page = await app.inject({ url: local(checkout.checkout_url) });
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers['content-type']), /text\/html/);
    assert.ok(page.body.includes('Acme &lt;Plumbing&gt; &amp; Sons'), 'escaped');
    assert.ok(page.body.includes('$10.00') && page.body.includes('1,000') && page.body.includes('>Pay<') && page.body.includes('>Cancel<'));

    const paid = await app.inject({ method: 'POST', url: `${local(checkout.checkout_url)}/pay`, headers: form, payload: '' });
    assert.equal(paid.statusCode, 200, paid.body);
    assert.ok(paid.body.includes('1,000 credits were added'));
    assert.equal(await balanceOf(org.orgId), 1000);
    const again = await app.inject({ method: 'POST', url: `${local(checkout.checkout_url)}/pay`, headers: form, payload: '' });
    assert.equal(again.statusCode, 409);
    assert.equal(await balanceOf(org.orgId), 1000);

    const credits = (await app.inject({ url: '/api/billing/credits', headers: asRole(org, 'user') })).json().data;
    assert.deepEqual(credits, { balance: 1000, credits_per_dollar: 100 });
    const ledger = (await app.inject({ url: '/api/billing/transactions', headers: asRole(org, 'user') })).json();
    assert.equal(ledger.data.length, 1);
    assert.equal(ledger.data[0].kind, 'purchase');
    assert.equal(ledger.data[0].amount, 1000);
    assert.equal(ledger.data[0].balance_after, 1000);
    assert.equal(ledger.data[0].source_id, checkout.session_id);
    assert.match(ledger.data[0].transaction_id, /^txn_[a-f0-9]{12}$/);
    const back = await app.inject({ url: '/api/billing/checkout/return?result=success' });
    assert.equal(back.statusCode, 200);
    assert.equal(await balanceOf(org.orgId), 1000, 'returning credits nothing');
    const status = await database.db.execute(sql`SELECT status FROM checkout_sessions WHERE id = ${checkout.session_id}`);
    assert.equal(status.rows[0]!.status, 'completed');
  });

  test("Pay and Cancel posted from another site are refused (403) and change nothing; from the platform's own page they work", async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const checkout = (await purchase(org, 10)).json();
    const pay = (headers: Record<string, string>) => app.inject({ method: 'POST', url: `${local(checkout.checkout_url)}/pay`, headers: { ...form, ...headers }, payload: '' });
    for (const headers of [{ 'sec-fetch-site': 'cross-site' }, { 'sec-fetch-site': 'same-site' }, { origin: 'https://evil.example' }, { origin: 'null' }] as Array<Record<string, string>>) {
      const refused = await pay(headers);
      assert.equal(refused.statusCode, 403, JSON.stringify(headers));
      assert.match(String(refused.headers['content-type']), /text\/html/);
    }
    const cancel = await app.inject({ method: 'POST', url: `${local(checkout.checkout_url)}/cancel`, headers: { ...form, origin: 'https://evil.example' }, payload: '' });
    assert.equal(cancel.statusCode, 403);
    assert.equal(await balanceOf(org.orgId), 0);
    // What Chromium sends from the page itself (its no-referrer policy makes the Origin null).
    const paid = await pay({ 'sec-fetch-site': 'same-origin', origin: 'null' });
    assert.equal(paid.statusCode, 200, paid.body);
    assert.equal(await balanceOf(org.orgId), 1000);
    // A browser without Sec-Fetch-Site: its Origin must be the platform's (PUBLIC_BASE_URL of the test configuration).
    const second = (await purchase(org, 5)).json();
    const older = await app.inject({ method: 'POST', url: `${local(second.checkout_url)}/pay`, headers: { ...form, origin: 'http://127.0.0.1:3000' }, payload: '' });
    assert.equal(older.statusCode, 200, older.body);
  });

  test('cancelled and expired sessions cannot be paid; an unknown session is 404', async () => {
    const { app, database } = await testEnv();
    const org = await createOrg();
    const cancelled = (await purchase(org, 10)).json();
    assert.equal((await app.inject({ method: 'POST', url: `${local(cancelled.checkout_url)}/cancel`, headers: form, payload: '' })).statusCode, 200);
    assert.equal((await app.inject({ method: 'POST', url: `${local(cancelled.checkout_url)}/pay`, headers: form, payload: '' })).statusCode, 409);
    const expired = (await purchase(org, 10)).json();
    await database.db.execute(sql`UPDATE checkout_sessions SET expires_at = now() - interval '1 second' WHERE id = ${expired.session_id}`);
    assert.ok((await app.inject({ url: local(expired.checkout_url) })).body.includes('Checkout expired'));
    assert.equal((await app.inject({ method: 'POST', url: `${local(expired.checkout_url)}/pay`, headers: form, payload: '' })).statusCode, 409);
    assert.equal((await app.inject({ url: '/api/billing/checkout/cs_000000000000' })).statusCode, 404);
    assert.equal(await balanceOf(org.orgId), 0);
  });

  test('the same signed event ten times, concurrently, with a sibling event out of order: credited once', async () => {
    const { app, database } = await testEnv();
    const org = await createOrg();
    const checkout = (await purchase(org, 20)).json();
    const payments = new LocalPayments('http://127.0.0.1:3000', TEST_ENCRYPTION_KEY);
    const event = await payments.paidEvent({ id: checkout.session_id, amountDollars: 20 });
    const sibling = await payments.paidEvent({ id: checkout.session_id, amountDollars: 20 });
    const deliver = (e: { body: string; signature: string }) =>
      app.inject({ method: 'POST', url: '/api/billing/webhook', headers: { 'content-type': 'application/json', 'stripe-signature': e.signature }, payload: e.body });
    const results = await Promise.all([...Array.from({ length: 10 }, () => deliver(event)), deliver(sibling)]);
    assert.ok(results.every((r) => r.statusCode === 200), results.map((r) => r.body).join('\n'));
    assert.equal(results.filter((r) => r.json().data.applied).length, 1);
    assert.equal(await balanceOf(org.orgId), 2000);
    const rows = await database.db.execute(sql`SELECT count(*)::int AS n FROM credit_transactions WHERE source_id = ${checkout.session_id}`);
    assert.equal(rows.rows[0]!.n, 1);
  });

  test('unknown session, tampered body, missing signature → 400 and no change; other organizations see nothing', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const other = await createOrg();
    const payments = new LocalPayments('http://127.0.0.1:3000', TEST_ENCRYPTION_KEY);
    const unknown = await payments.paidEvent({ id: 'cs_ffffffffffff', amountDollars: 20 });
    const checkout = (await purchase(org, 20)).json();
    const good = await payments.paidEvent({ id: checkout.session_id, amountDollars: 20 });
    const cases: Array<[string, string | undefined]> = [
      [unknown.body, unknown.signature],
      [good.body.replace('"amount_total":2000', '"amount_total":200000'), good.signature],
      [good.body, undefined],
      ['not json', good.signature],
    ];
    for (const [body, signature] of cases) {
      const res = await app.inject({ method: 'POST', url: '/api/billing/webhook', headers: { 'content-type': 'application/json', ...(signature ? { 'stripe-signature': signature } : {}) }, payload: body });
      assert.equal(res.statusCode, 400, res.body);
    }
    assert.equal(await balanceOf(org.orgId), 0);
    assert.deepEqual((await app.inject({ url: '/api/billing/transactions', headers: asRole(other, 'admin') })).json().data, []);
    assert.equal((await app.inject({ url: '/api/billing/credits', headers: asRole(other, 'admin') })).json().data.balance, 0);
  });

  test('200 concurrent call debits against a balance that covers 50: exactly 50 billed, balance 0, the ledger sums to it', async () => {
    const { database } = await testEnv();
    const org = await createOrg();
    await setConcurrencyLimit(org.orgId, 1000); // 200 calls active at once, beyond the default limit
    const agentId = (await createAgent(org)).agent_id;
    await grantCredits(org.orgId, 250);
    const calls = [];
    for (let i = 0; i < 200; i += 20) calls.push(...(await Promise.all(Array.from({ length: 20 }, () => createCall(org, agentId, { status: 'in_progress' })))));
    const results = await Promise.all(calls.map((c) => patchCall(org, c.call_sid, { status: 'completed', total_cost: 5 })));
    assert.ok(results.every((r) => r.statusCode === 200));
    const billed = results.filter((r) => r.json().data.billing_status === 'billed').length;
    assert.equal(billed, 50);
    assert.equal(await balanceOf(org.orgId), 0);
    const sum = await database.db.execute(sql`SELECT sum(amount) AS s, count(*)::int AS n FROM credit_transactions WHERE client_id = ${org.orgId}`);
    assert.equal(Number(sum.rows[0]!.s), 0);
    assert.equal(sum.rows[0]!.n, 51);
  });
});

describe('billing: Stripe (SDK against a stand-in of its API on 127.0.0.1)', () => {
  const WEBHOOK_SECRET = 'whsec_test_standin_secret';
  let stripeApi: Awaited<ReturnType<typeof startStripeStandIn>>;
  let app: FastifyInstance;
  before(async () => {
    stripeApi = await startStripeStandIn();
    const { database, tmpDir } = await testEnv();
    const config = testConfig(tmpDir, {
      PAYMENT_PROVIDER: 'stripe', STRIPE_SECRET_KEY: 'sk_test_standin', STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET, STRIPE_API_URL: stripeApi.url,
      CHECKOUT_SUCCESS_URL: 'https://app.example.test/billing?paid=1', CHECKOUT_CANCEL_URL: 'https://app.example.test/billing',
    });
    app = await buildTestApp(config);
  });
  after(async () => {
    await app?.close();
    await stripeApi?.close();
  });

  const signed = (object: Record<string, unknown>, options: { type?: string; id?: string; timestamp?: number; secret?: string } = {}) => {
    const payload = JSON.stringify({ id: options.id ?? `evt_${Math.random().toString(36).slice(2)}`, object: 'event', type: options.type ?? 'checkout.session.completed', data: { object } });
    const header = Stripe.webhooks.generateTestHeaderString({ payload, secret: options.secret ?? WEBHOOK_SECRET, timestamp: options.timestamp });
    return { payload, header };
  };
  const deliver = (e: { payload: string; header?: string }) =>
    app.inject({ method: 'POST', url: '/api/billing/webhook', headers: { 'content-type': 'application/json', ...(e.header ? { 'stripe-signature': e.header } : {}) }, payload: e.payload });

  test('purchase creates a Checkout Session (payment, cents, metadata, return URLs, idempotency key)', async () => {
    const org = await createOrg();
    const res = await purchase(org, 25, { 'idempotency-key': 'k-1' }, app);
    assert.equal(res.statusCode, 200, res.body);
    const request = stripeApi.requests.at(-1)!;
    assert.equal(request.path, '/v1/checkout/sessions');
    assert.equal(request.headers.authorization, 'Bearer sk_test_standin');
    assert.equal(request.headers['idempotency-key'], `${org.orgId}:k-1:25`);
    assert.equal(request.form.get('mode'), 'payment');
    assert.equal(request.form.get('line_items[0][price_data][unit_amount]'), '2500');
    assert.equal(request.form.get('line_items[0][price_data][currency]'), 'usd');
    assert.equal(request.form.get('metadata[organization_id]'), org.orgId);
    assert.equal(request.form.get('metadata[credits]'), '2500');
    assert.equal(request.form.get('metadata[session_id]'), res.json().session_id);
    assert.equal(request.form.get('success_url'), 'https://app.example.test/billing?paid=1');
    assert.equal(request.form.get('cancel_url'), 'https://app.example.test/billing');
    assert.match(res.json().checkout_url, /^https:\/\/checkout\.stripe\.test\/c\/pay\/cs_test_/);
    assert.match(res.json().session_id, /^cs_[a-f0-9]{12}$/);
  });

  test('checkout.session.completed and paid credits once; unpaid, stale, forged or unsigned events change nothing', async () => {
    const org = await createOrg();
    await purchase(org, 30, {}, app);
    const stripeSession = stripeApi.requests.at(-1);
    const { rows } = await (await testEnv()).database.pool.query('SELECT provider_session_id FROM checkout_sessions WHERE client_id = $1', [org.orgId]);
    const id = rows[0].provider_session_id;
    // The session the platform keeps is the one it asked Stripe for, for this organization.
    assert.equal(stripeSession?.path, '/v1/checkout/sessions');
    assert.equal(stripeSession?.form.get('metadata[organization_id]'), org.orgId);
    assert.match(id, /^cs_test_standin/);
    const object = { id, object: 'checkout.session', payment_status: 'paid', amount_total: 3000, currency: 'usd' };

    assert.equal((await deliver(signed({ ...object, payment_status: 'unpaid' }))).json().data.applied, false);
    for (const forged of [
      signed(object, { timestamp: Math.floor(Date.now() / 1000) - 301 }),
      signed(object, { secret: 'whsec_someone_else' }),
      { payload: signed(object).payload },
    ]) {
      assert.equal((await deliver(forged)).statusCode, 400);
    }
    assert.equal((await deliver(signed({ ...object, amount_total: 2999 }))).statusCode, 400, 'amount differs');
    assert.equal(await balanceOf(org.orgId), 0);

    const event = signed(object, { id: 'evt_once' + Date.now() });
    const results = await Promise.all(Array.from({ length: 10 }, () => deliver(event)));
    assert.ok(results.every((r) => r.statusCode === 200));
    assert.equal(await balanceOf(org.orgId), 3000);
    const late = await deliver(signed(object, { type: 'checkout.session.async_payment_succeeded' }));
    assert.equal(late.json().data.applied, false);
    assert.equal(await balanceOf(org.orgId), 3000);
  });

  test('the provider failing → 502, no session kept', async () => {
    const org = await createOrg();
    stripeApi.state.fail = true;
    try {
      const res = await purchase(org, 10, {}, app);
      assert.equal(res.statusCode, 502);
      assert.equal(res.json().code, 'payment_provider_error');
    } finally {
      stripeApi.state.fail = false;
    }
    const { rows } = await (await testEnv()).database.pool.query('SELECT count(*)::int AS n FROM checkout_sessions WHERE client_id = $1', [org.orgId]);
    assert.equal(rows[0].n, 0);
  });
});
