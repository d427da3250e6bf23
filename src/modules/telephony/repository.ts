import { and, eq, isNull } from 'drizzle-orm';
import type { Executor } from '../../db/database.ts';
import { CALL_COLUMNS, calls, integrations, phoneNumbers, type CallRecord } from '../../db/schema/index.ts';

export type TelephonyNumber = typeof phoneNumbers.$inferSelect;
export type TelephonyCall = CallRecord;
export type TelephonyIntegration = typeof integrations.$inferSelect;

/**
 * The carrier's webhooks arrive without an organization: the called number (unique in the whole
 * system) names it. That lookup is the only one that starts without an organization id; everything
 * after it takes the one it found, and nothing is trusted before the request's signature is checked
 * with that organization's token. The carrier's call sid is looked up within that organization only:
 * a sid is whatever the signer writes, so another organization's sid must never find its call.
 */
export class TelephonyRepository {
  readonly #db: Executor;
  constructor(db: Executor) {
    this.#db = db;
  }

  async numberByE164(phoneNumber: string): Promise<TelephonyNumber | undefined> {
    const [row] = await this.#db.select().from(phoneNumbers).where(eq(phoneNumbers.phoneNumber, phoneNumber)).limit(1);
    return row;
  }

  async callByProviderSid(orgId: string, providerCallSid: string): Promise<TelephonyCall | undefined> {
    const [row] = await this.#db.select(CALL_COLUMNS).from(calls)
      .where(and(eq(calls.clientId, orgId), eq(calls.providerCallSid, providerCallSid))).limit(1);
    return row;
  }

  async call(orgId: string, callSid: string, options: { forUpdate?: boolean } = {}): Promise<TelephonyCall | undefined> {
    const query = this.#db.select(CALL_COLUMNS).from(calls).where(and(eq(calls.clientId, orgId), eq(calls.callSid, callSid)));
    const [row] = options.forUpdate ? await query.for('update') : await query;
    return row;
  }

  async numberOf(orgId: string, phoneNumber: string): Promise<TelephonyNumber | undefined> {
    const [row] = await this.#db.select().from(phoneNumbers).where(and(eq(phoneNumbers.clientId, orgId), eq(phoneNumbers.phoneNumber, phoneNumber)));
    return row;
  }

  async integration(orgId: string, id: string): Promise<TelephonyIntegration | undefined> {
    const [row] = await this.#db.select().from(integrations).where(and(eq(integrations.clientId, orgId), eq(integrations.id, id)));
    return row;
  }

  /** Records the carrier's sid of a call placed or answered through it (the first one stays). */
  async setProviderCallSid(orgId: string, callSid: string, providerCallSid: string): Promise<void> {
    await this.#db.update(calls).set({ providerCallSid, updatedAt: new Date() })
      .where(and(eq(calls.clientId, orgId), eq(calls.callSid, callSid), isNull(calls.providerCallSid)));
  }
}
