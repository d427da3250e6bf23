import type { Executor } from '../../db/database.ts';
import { roundCredits } from '../../core/credits.ts';
import type { AnalyticsService } from '../analytics/service.ts';
import type { BillingService } from '../billing/service.ts';
import type { EventOutbox } from '../../platform/outbox.ts';
import type { CallRow } from './repository.ts';
import type { CallEndListener, EndedTranscriptListener } from './ports.ts';
import { usageOf } from './late-report.ts';
import { toCall } from './views.ts';

type BillingStatus = 'billed' | 'insufficient_credits' | 'waived';

/**
 * The end of a call, in one place and one order, inside the transaction of the report that ends it:
 * the credits debited (`charge`, before the row is written, whose billing status it gives), then
 * (`ended`) the call counted in the analytics, `call.ended` emitted, and the modules that wait for an
 * ended call (campaigns, post-call analysis). Every way a call ends (the runtime's final report, the
 * carrier's status, a refused placement, a call over the concurrency limit, a lost preview) reaches it
 * through CallService's one report path, so each step happens once. A runtime's report of a call the
 * carrier had already ended goes through `rebill` and `reportedLate`: billed again to its new cost, recounted.
 */
export class CallEnding {
  readonly #billing: Pick<BillingService, 'debitForCall' | 'rebillCall'>;
  readonly #analytics: Pick<AnalyticsService, 'recordEndedCall' | 'replaceEndedCall'>;
  readonly #outbox: EventOutbox;
  readonly #endListeners: CallEndListener[] = [];
  readonly #transcriptListeners: EndedTranscriptListener[] = [];

  constructor(deps: {
    billing: Pick<BillingService, 'debitForCall' | 'rebillCall'>;
    analytics: Pick<AnalyticsService, 'recordEndedCall' | 'replaceEndedCall'>;
    outbox: EventOutbox;
  }) {
    this.#billing = deps.billing;
    this.#analytics = deps.analytics;
    this.#outbox = deps.outbox;
  }

  /** A module that acts on every ended call, in its transaction (campaigns). */
  onEnded(listener: CallEndListener): void {
    this.#endListeners.push(listener);
  }

  /** A module that acts on an ended call's transcript, and on a late one (post-call analysis). */
  onTranscript(listener: EndedTranscriptListener): void {
    this.#transcriptListeners.push(listener);
  }

  /** Debits the call's cost once; what it was billed as. */
  async charge(tx: Executor, orgId: string, callSid: string, cost: number): Promise<BillingStatus> {
    if (cost <= 0) return 'waived';
    return (await this.#billing.debitForCall(tx, orgId, callSid, cost)) ? 'billed' : 'insufficient_credits';
  }

  /** After the ended call's row is written: counted, announced, handed on. */
  async ended(tx: Executor, orgId: string, call: CallRow): Promise<void> {
    await this.#analytics.recordEndedCall(tx, orgId, usageOf(call));
    await this.#outbox.emit(tx, orgId, 'call.ended', toCall(call), { agentId: call.agentId });
    for (const listener of this.#endListeners) await listener.callEnded(tx, orgId, call);
    for (const listener of this.#transcriptListeners) await listener.callEnded(tx, orgId, call);
  }

  /**
   * The runtime's report of a call the carrier had ended, merged into `after`: billed again (one more
   * ledger row for the difference, or its first debit when nothing was charged; the post-call analyses
   * were charged on rows of their own), recounted, `call.updated` told. Returns the new billing status.
   */
  async rebill(tx: Executor, orgId: string, before: CallRow, newTotalCost: number): Promise<BillingStatus> {
    const analyses = before.costBreakdown?.analysis ?? 0;
    const cost = roundCredits(newTotalCost - analyses);
    const charged = before.billingStatus === 'billed' ? roundCredits((before.totalCost ?? 0) - analyses) : 0;
    return this.#billing.rebillCall(tx, orgId, before.callSid, charged, cost);
  }

  async reportedLate(tx: Executor, orgId: string, before: CallRow, after: CallRow, withTranscript: boolean): Promise<void> {
    await this.#analytics.replaceEndedCall(tx, orgId, usageOf(before), usageOf(after));
    await this.#outbox.emit(tx, orgId, 'call.updated', toCall(after), { agentId: after.agentId });
    if (withTranscript) for (const listener of this.#transcriptListeners) await listener.callEnded(tx, orgId, after);
  }
}
