import type { Executor } from '../../db/database.ts';
import { newId } from '../../core/ids.ts';
import { roundCredits } from '../../core/credits.ts';
import { LedgerQueries } from './ledger-queries.ts';
import type { TransactionRow } from './repository.ts';

export type LedgerKind = 'purchase' | 'call_usage' | 'adjustment';
export const LOW_BALANCE_THRESHOLD_DEFAULT = 100;


/**
 * The credits ledger of one organization. Every movement writes a ledger row and the balance in
 * the caller's transaction; `(client_id, kind, source_id)` is unique, so one source event moves
 * credits once, and the balance's check constraint makes an overdraft impossible.
 */
export class CreditLedger {
  readonly #queries: LedgerQueries;
  constructor(db: Executor) {
    this.#queries = new LedgerQueries(db);
  }

  async balance(orgId: string): Promise<number> {
    return (await this.#queries.balance(orgId)) ?? 0;
  }

  /**
   * Takes `amount` credits for a call if the balance covers it, in one guarded UPDATE (concurrent
   * debits serialize on the account row). False when it does not: nothing is written.
   */
  async debitForCall(orgId: string, callSid: string, amount: number): Promise<{ balanceAfter: number; threshold: number } | undefined> {
    return this.#chargeCall(orgId, amount, callSid, `Call ${callSid}`);
  }

  /**
   * Charges (`amount` > 0, if the balance covers it) or gives back (`amount` < 0) the difference a
   * late report made to a call already billed: a `call_usage` row of its own (source
   * `{call_sid}/late_report/{id}`), so the call's rows still add up to its total cost.
   */
  async correctCall(orgId: string, callSid: string, amount: number): Promise<{ balanceAfter: number; threshold: number } | undefined> {
    return this.#chargeCall(orgId, amount, `${callSid}/late_report/${newId('txn')}`, `Call ${callSid}: the runtime's report after the carrier ended it`);
  }

  /**
   * Takes a post-call analysis's cost (extensions.md §13) if the balance covers it: a `call_usage`
   * row of its own (source `{call_sid}/analysis/{run_id}`), so a run is charged once (the source is
   * unique) and the call's rows still add up to its total cost.
   */
  async debitForAnalysis(orgId: string, callSid: string, runId: string, amount: number): Promise<{ balanceAfter: number; threshold: number } | undefined> {
    return this.#chargeCall(orgId, amount, `${callSid}/analysis/${runId}`, `Call ${callSid}: post-call analysis`);
  }

  /**
   * The guarded debit every call charge shares: takes `amount` (a negative amount gives back) if the
   * balance covers it, in one UPDATE (concurrent charges serialize on the account row), and writes its
   * `call_usage` row. Undefined when the balance does not cover it: nothing is written.
   */
  async #chargeCall(orgId: string, amount: number, sourceId: string, description: string): Promise<{ balanceAfter: number; threshold: number } | undefined> {
    await this.#queries.ensureAccount(orgId);
    const account = await this.#queries.debitIfCovered(orgId, amount);
    if (!account) return undefined;
    await this.#queries.insertRow(orgId, { id: newId('txn'), kind: 'call_usage', amount: -amount, balanceAfter: account.balance, sourceId, description });
    return { balanceAfter: account.balance, threshold: account.threshold };
  }

  /** The balance below which `credits.low` is emitted (the default until an admin sets one). */
  async lowBalanceThreshold(orgId: string): Promise<number> {
    return (await this.#queries.lowBalanceThreshold(orgId)) ?? LOW_BALANCE_THRESHOLD_DEFAULT;
  }

  async setLowBalanceThreshold(orgId: string, threshold: number): Promise<number> {
    await this.#queries.ensureAccount(orgId);
    return this.#queries.setLowBalanceThreshold(orgId, threshold);
  }

  /**
   * Adds credits for a source event (a paid checkout session, an adjustment). The ledger row goes
   * first and does nothing on a repeated source, so a replayed event changes nothing.
   * Returns the new transaction, or undefined when this source was already applied.
   */
  async credit(orgId: string, kind: Exclude<LedgerKind, 'call_usage'>, sourceId: string, amount: number, description: string): Promise<TransactionRow | undefined> {
    await this.#queries.ensureAccount(orgId);
    const balanceAfter = roundCredits((await this.#queries.lockBalance(orgId)) + amount);
    const row = await this.#queries.insertRowOnce(orgId, { id: newId('txn'), kind, amount, balanceAfter, sourceId, description });
    if (!row) return undefined;
    await this.#queries.setBalance(orgId, balanceAfter);
    return row;
  }
}
