import { and, eq, sql } from 'drizzle-orm';
import type { Executor } from '../../db/database.ts';
import { creditAccounts, creditTransactions } from '../../db/schema/index.ts';
import type { TransactionRow } from './repository.ts';

export type NewLedgerRow = Omit<typeof creditTransactions.$inferInsert, 'clientId'>;

/**
 * The credit account and the ledger rows of one organization, as CreditLedger (ledger.ts) moves
 * them in the caller's transaction: every method takes the organization id first.
 */
export class LedgerQueries {
  readonly #db: Executor;
  constructor(db: Executor) {
    this.#db = db;
  }

  async ensureAccount(orgId: string): Promise<void> {
    await this.#db.insert(creditAccounts).values({ clientId: orgId }).onConflictDoNothing();
  }

  /** Undefined when the organization has no account yet. */
  async balance(orgId: string): Promise<number | undefined> {
    const [row] = await this.#db.select({ balance: creditAccounts.balance }).from(creditAccounts).where(eq(creditAccounts.clientId, orgId));
    return row?.balance;
  }

  /** The balance, its account row locked to the end of the transaction. */
  async lockBalance(orgId: string): Promise<number> {
    const [account] = await this.#db.select().from(creditAccounts).where(eq(creditAccounts.clientId, orgId)).for('update');
    return account!.balance;
  }

  /**
   * Takes `amount` (a negative amount gives back) if the balance covers it, in one guarded UPDATE
   * (concurrent charges serialize on the account row); undefined when it does not: nothing is written.
   */
  async debitIfCovered(orgId: string, amount: number): Promise<{ balance: number; threshold: number } | undefined> {
    const [account] = await this.#db
      .update(creditAccounts)
      .set({ balance: sql`${creditAccounts.balance} - ${amount}`, updatedAt: new Date() })
      .where(and(eq(creditAccounts.clientId, orgId), sql`${creditAccounts.balance} >= ${amount}`))
      .returning({ balance: creditAccounts.balance, threshold: creditAccounts.lowBalanceThreshold });
    return account;
  }

  async setBalance(orgId: string, balance: number): Promise<void> {
    await this.#db.update(creditAccounts).set({ balance, updatedAt: new Date() }).where(eq(creditAccounts.clientId, orgId));
  }

  async insertRow(orgId: string, row: NewLedgerRow): Promise<void> {
    await this.#db.insert(creditTransactions).values({ ...row, clientId: orgId });
  }

  /** Undefined when the organization's ledger has a row of this kind and source already. */
  async insertRowOnce(orgId: string, row: NewLedgerRow): Promise<TransactionRow | undefined> {
    const [created] = await this.#db.insert(creditTransactions).values({ ...row, clientId: orgId }).onConflictDoNothing().returning();
    return created;
  }

  /** Undefined when the organization has no account yet. */
  async lowBalanceThreshold(orgId: string): Promise<number | undefined> {
    const [row] = await this.#db.select({ threshold: creditAccounts.lowBalanceThreshold }).from(creditAccounts).where(eq(creditAccounts.clientId, orgId));
    return row?.threshold;
  }

  async setLowBalanceThreshold(orgId: string, threshold: number): Promise<number> {
    const [row] = await this.#db.update(creditAccounts).set({ lowBalanceThreshold: threshold, updatedAt: new Date() })
      .where(eq(creditAccounts.clientId, orgId)).returning({ threshold: creditAccounts.lowBalanceThreshold });
    return row!.threshold;
  }
}
