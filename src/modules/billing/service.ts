import type { Static } from 'typebox';
import type { Db } from '../../db/database.ts';
import type { RequestContext } from '../../core/context.ts';
import { decodeTimeCursor, toPage, type Page } from '../../core/cursor.ts';
import { Errors } from '../../core/errors.ts';
import { newId } from '../../core/ids.ts';
import { iso } from '../../core/schemas.ts';
import {
  InvalidSignatureError, PaymentProviderError, type PaymentEvent, type PaymentProvider,
} from '../../adapters/payments/payment-provider.ts';
import { roundCredits } from '../../core/credits.ts';
import type { Executor } from '../../db/database.ts';
import { CreditLedger } from './ledger.ts';
import type { OrganizationService } from '../organizations/service.ts';
import type { EventOutbox } from '../../platform/outbox.ts';
import type { AuditService } from '../audit/service.ts';
import { BillingRepository, type CheckoutSessionRow, type TransactionRow } from './repository.ts';
import { CHECKOUT_LIFETIME_MS, type CheckoutSession, type Transaction, type WebhookReceipt } from './schemas.ts';
import { transaction } from '../../db/unit-of-work.ts';

type TransactionView = Static<typeof Transaction>;
type Receipt = Static<typeof WebhookReceipt>;

const toTransaction = (row: TransactionRow): TransactionView => ({
  transaction_id: row.id, kind: row.kind as TransactionView['kind'], amount: row.amount, balance_after: row.balanceAfter,
  source_id: row.sourceId, description: row.description, created_at: iso(row.createdAt),
});

const toCheckout = (row: CheckoutSessionRow): Static<typeof CheckoutSession> => ({
  checkout_url: row.checkoutUrl, session_id: row.id, credits_to_receive: row.credits,
});

/** Events that complete a checkout; the async one is how delayed payment methods report success. */
const COMPLETING = new Set(['checkout.session.completed', 'checkout.session.async_payment_succeeded']);

export interface BillingDeps {
  db: Db;
  provider: PaymentProvider;
  creditsPerDollar: number;
  organizations: OrganizationService;
  log: { warn(obj: object, message: string): void };
  /** credits.purchased and credits.low, in the ledger's transaction. */
  outbox: EventOutbox;
  /** billing_settings.update and checkout.create entries, in the same transaction. */
  audit: Pick<AuditService, 'record'>;
}

export class BillingService {
  readonly #deps: BillingDeps;
  constructor(deps: BillingDeps) {
    this.#deps = deps;
  }

  async credits(ctx: RequestContext) {
    return { balance: await new CreditLedger(this.#deps.db).balance(ctx.orgId), credits_per_dollar: this.#deps.creditsPerDollar };
  }

  /** The organization's balance as the caller's transaction sees it (a campaign waits while it is not positive). */
  balanceOf(within: Executor, orgId: string): Promise<number> {
    return new CreditLedger(within).balance(orgId);
  }

  /**
   * Takes a call's cost if the balance covers it, in the caller's transaction (the call's final
   * update). False when it does not: nothing is taken.
   */
  async debitForCall(within: Executor, orgId: string, callSid: string, amount: number): Promise<boolean> {
    const debit = await new CreditLedger(within).debitForCall(orgId, callSid, amount);
    if (!debit) return false;
    await this.#emitIfLow(within, orgId, roundCredits(debit.balanceAfter + amount), debit.balanceAfter, debit.threshold);
    return true;
  }

  /** Takes a post-call analysis's cost in the analysis's transaction if the balance covers it; false when not. */
  async debitForAnalysis(within: Executor, orgId: string, callSid: string, runId: string, amount: number): Promise<boolean> {
    const debit = await new CreditLedger(within).debitForAnalysis(orgId, callSid, runId, amount);
    if (!debit) return false;
    await this.#emitIfLow(within, orgId, roundCredits(debit.balanceAfter + amount), debit.balanceAfter, debit.threshold);
    return true;
  }

  /**
   * Bills a call again after a late report changed its cost (the carrier ended it, then the
   * runtime reported): what was charged (`charged`: its cost if it was billed, else nothing) is
   * brought to `cost` by one more ledger row (or, when nothing was charged, by the call's first
   * debit), so the ledger always holds the call's cost once. Answers its new billing status; a
   * balance that cannot cover the rise leaves what was charged, `insufficient_credits`.
   */
  async rebillCall(within: Executor, orgId: string, callSid: string, charged: number, cost: number): Promise<'billed' | 'insufficient_credits' | 'waived'> {
    if (charged === 0) return cost > 0 ? ((await this.debitForCall(within, orgId, callSid, cost)) ? 'billed' : 'insufficient_credits') : 'waived';
    const difference = roundCredits(cost - charged);
    if (difference === 0) return 'billed';
    const moved = await new CreditLedger(within).correctCall(orgId, callSid, difference);
    if (!moved) return 'insufficient_credits';
    await this.#emitIfLow(within, orgId, roundCredits(moved.balanceAfter + difference), moved.balanceAfter, moved.threshold);
    return cost > 0 ? 'billed' : 'waived';
  }

  /** credits.low once per downward crossing: the balance was at or above the threshold and is now below it. */
  async #emitIfLow(within: Executor, orgId: string, before: number, after: number, threshold: number): Promise<void> {
    if (before >= threshold && after < threshold) await this.#deps.outbox.emit(within, orgId, 'credits.low', { balance: after, threshold });
  }

  async settings(ctx: RequestContext): Promise<{ low_balance_threshold: number }> {
    return { low_balance_threshold: await new CreditLedger(this.#deps.db).lowBalanceThreshold(ctx.orgId) };
  }

  async updateSettings(ctx: RequestContext, input: { low_balance_threshold: number }): Promise<{ low_balance_threshold: number }> {
    const threshold = await transaction(this.#deps.db, async (tx) => {
      const set = await new CreditLedger(tx).setLowBalanceThreshold(ctx.orgId, roundCredits(input.low_balance_threshold));
      await this.#deps.audit.record(tx, ctx, { action: 'billing_settings.update', resourceType: 'billing_settings', resourceId: ctx.orgId, changedFields: Object.keys(input) });
      return set;
    });
    return { low_balance_threshold: threshold };
  }

  /** An operator's adjustment (`switchboard credits:adjust`): never below zero. */
  async adjust(orgId: string, amount: number, reason: string) {
    return transaction(this.#deps.db, async (tx) => {
      if (!(await this.#deps.organizations.organizationName(orgId, tx))) throw Errors.notFound(`Organization ${orgId}`);
      const ledger = new CreditLedger(tx);
      if ((await ledger.balance(orgId)) + amount < 0) throw Errors.conflict('insufficient_credits', 'The balance would go below zero');
      const row = await ledger.credit(orgId, 'adjustment', newId('adj'), roundCredits(amount), reason);
      await this.#emitIfLow(tx, orgId, roundCredits(row!.balanceAfter - row!.amount), row!.balanceAfter, await ledger.lowBalanceThreshold(orgId));
      return toTransaction(row!);
    });
  }

  async transactions(ctx: RequestContext, query: { page_size: number; cursor?: string }): Promise<Page<TransactionView>> {
    const before = query.cursor ? decodeTimeCursor(query.cursor) : undefined;
    const rows = await new BillingRepository(this.#deps.db).listTransactions(ctx.orgId, query.page_size + 1, before);
    return toPage(rows, query.page_size, (r) => ({ value: r.createdAt.toISOString(), id: r.id }), toTransaction);
  }

  /**
   * Opens a checkout at the provider. With an Idempotency-Key, the same key returns the same
   * session, and the same key with another amount is 409; the provider gets a key derived from
   * it too, so concurrent retries make one provider session.
   */
  async purchase(ctx: RequestContext, amountDollars: number, idempotencyKey: string | undefined) {
    const repo = new BillingRepository(this.#deps.db);
    const replay = async () => {
      const existing = idempotencyKey ? await repo.findByIdempotencyKey(ctx.orgId, idempotencyKey) : undefined;
      if (existing && existing.amountDollars !== amountDollars) {
        throw Errors.conflict('idempotency_key_reused', 'This Idempotency-Key was used for a purchase of another amount');
      }
      return existing;
    };
    const earlier = await replay();
    if (earlier) return toCheckout(earlier);

    const sessionId = newId('cs');
    const credits = amountDollars * this.#deps.creditsPerDollar;
    const expiresAt = new Date(Date.now() + CHECKOUT_LIFETIME_MS);
    let checkout;
    try {
      checkout = await this.#deps.provider.createCheckout({
        sessionId, orgId: ctx.orgId, amountDollars, credits, expiresAt,
        idempotencyKey: idempotencyKey ? `${ctx.orgId}:${idempotencyKey}:${amountDollars}` : sessionId,
      });
    } catch (err) {
      if (err instanceof PaymentProviderError) throw Errors.upstream('payment_provider_error', err.message, { cause: err });
      throw err;
    }
    const row = await transaction(this.#deps.db, async (tx) => {
      const inserted = await new BillingRepository(tx).insertSession(ctx.orgId, {
        id: sessionId, provider: this.#deps.provider.kind, providerSessionId: checkout.providerSessionId, checkoutUrl: checkout.url,
        amountDollars, credits, idempotencyKey: idempotencyKey ?? null, createdBy: ctx.actor.userId, expiresAt,
      });
      if (inserted) await this.#deps.audit.record(tx, ctx, { action: 'checkout.create', resourceType: 'checkout_session', resourceId: sessionId, changedFields: ['amount'] });
      return inserted;
    });
    if (row) return toCheckout(row);
    const winner = await replay(); // a concurrent request with the same key got there first
    if (!winner) throw Errors.internal();
    return toCheckout(winner);
  }

  /** A provider's webhook: the signature is checked on the raw body before anything is read. */
  async handleWebhook(rawBody: Buffer, signature: string | undefined): Promise<Receipt> {
    let event: PaymentEvent;
    try {
      event = await this.#deps.provider.verifyEvent(rawBody, signature);
    } catch (err) {
      if (err instanceof InvalidSignatureError) throw Errors.validation(`The webhook signature is not valid: ${err.message}`);
      throw err;
    }
    return this.applyEvent(event);
  }

  /**
   * Applies a verified event once. The session row is locked, the event id is recorded, and the
   * credit is a ledger row unique per session: the same event delivered many times, concurrently
   * or out of order with its siblings, credits once. An unknown session, or a paid amount that is
   * not the session's, changes nothing and is refused.
   */
  async applyEvent(event: PaymentEvent): Promise<Receipt> {
    const provider = this.#deps.provider.kind;
    if (!event.type.startsWith('checkout.session.') || !event.providerSessionId) {
      return { received: true, applied: false, detail: `Event type ${event.type} is not used` };
    }
    return transaction(this.#deps.db, async (tx) => {
      const repo = new BillingRepository(tx);
      const session = await repo.findByProviderSession(provider, event.providerSessionId!);
      if (!session) throw Errors.validation(`No checkout session ${event.providerSessionId}`);
      const record = (outcome: string) => repo.recordEvent({ id: event.id, provider, type: event.type, sessionId: session.id, outcome });

      if (event.type === 'checkout.session.expired') {
        if (!(await record('expired'))) return { received: true, applied: false, detail: 'Event already handled' };
        if (session.status === 'open') await repo.setSessionStatus(session.id, 'expired');
        return { received: true, applied: session.status === 'open', detail: 'Checkout session expired' };
      }
      if (!COMPLETING.has(event.type)) return { received: true, applied: false, detail: `Event type ${event.type} is not used` };
      if (event.paymentStatus !== 'paid') {
        await record('not_paid');
        return { received: true, applied: false, detail: 'The session is not paid (yet)' };
      }
      if (event.amountTotal !== session.amountDollars * 100 || (event.currency && event.currency !== 'usd')) {
        this.#deps.log.warn({ event, session_id: session.id, expected_cents: session.amountDollars * 100 }, 'payment refused: amount differs from the checkout session');
        throw Errors.validation(`The paid amount (${event.amountTotal} ${event.currency ?? ''}) is not the session's ${session.amountDollars * 100} usd cents`);
      }
      if (provider === 'local' && (session.status === 'cancelled' || session.expiresAt <= new Date())) {
        throw Errors.conflict('checkout_closed', 'The checkout session was cancelled or has expired');
      }
      if (!(await record('credited'))) return { received: true, applied: false, detail: 'Event already handled' };
      const credited = await new CreditLedger(tx).credit(
        session.clientId, 'purchase', session.id, session.credits, `Purchase of ${session.credits} credits ($${session.amountDollars})`,
      );
      if (session.status !== 'completed') await repo.setSessionStatus(session.id, 'completed', new Date());
      if (credited) await this.#deps.outbox.emit(tx, session.clientId, 'credits.purchased', { ...toTransaction(credited), balance: credited.balanceAfter });
      return { received: true, applied: credited !== undefined, detail: credited ? `${session.credits} credits added` : 'Session already credited' };
    });
  }

  /** The hosted page's view of a session (local provider). */
  async checkoutPage(sessionId: string) {
    const session = await new BillingRepository(this.#deps.db).findSession(sessionId);
    if (!session || session.provider !== 'local') throw Errors.notFound('Checkout session');
    const expired = session.status === 'open' && session.expiresAt <= new Date();
    const organization = await this.#deps.organizations.organizationName(session.clientId);
    return { session, status: expired ? 'expired' : session.status, organization: organization ?? session.clientId };
  }

  /**
   * Pay on the hosted page (local provider): the signed completion event goes through the
   * webhook's path, as a real provider's would. Only an open session can be paid.
   */
  async payLocalCheckout(sessionId: string): Promise<CheckoutSessionRow> {
    const { session, status } = await this.checkoutPage(sessionId);
    if (status !== 'open') throw Errors.conflict(`checkout_${status}`, `This checkout session is ${status}.`);
    const page = this.#deps.provider.hostedPage;
    if (!page) throw Errors.notFound('Checkout session');
    const event = await page.paidEvent(session);
    await this.handleWebhook(Buffer.from(event.body), event.signature);
    return session;
  }

  /** Cancel on the hosted page: an open session can no longer be paid. */
  async cancelCheckout(sessionId: string): Promise<void> {
    const { session, status } = await this.checkoutPage(sessionId);
    if (status !== 'open') throw Errors.conflict(`checkout_${status}`, `The checkout session is ${status}`);
    await new BillingRepository(this.#deps.db).setSessionStatus(session.id, 'cancelled');
  }
}
