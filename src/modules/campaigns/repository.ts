import { and, count, eq, sql } from 'drizzle-orm';
import type { Executor } from '../../db/database.ts';
import { campaigns } from '../../db/schema/index.ts';
import { TenantRepository } from '../../db/tenant-repository.ts';

export type CampaignRow = typeof campaigns.$inferSelect;
export type { CampaignWindow } from '../../db/schema/index.ts';
export type NewCampaignRow = Omit<typeof campaigns.$inferInsert, 'clientId'>;

/** The progress counters, one per contact status. */
export type Counter = 'pending' | 'inProgress' | 'completed' | 'failed' | 'retrying' | 'skipped';

/** Campaigns of one organization: every method takes the organization id first (by id, list, count: TenantRepository). */
export class CampaignRepository extends TenantRepository<typeof campaigns> {
  constructor(db: Executor) {
    super(db, campaigns);
  }

  async insert(orgId: string, row: NewCampaignRow): Promise<CampaignRow> {
    const [created] = await this.db.insert(campaigns).values({ ...row, clientId: orgId }).returning();
    return created!;
  }

  /**
   * The campaign's status and total, its row locked to the end of the transaction: all a batch of
   * an upload needs (a 1,000-row batch of a 100,000-row upload takes it 100 times; the whole row
   * would be built and read each time).
   */
  async lockCounts(orgId: string, id: string): Promise<{ status: string; total: number } | undefined> {
    const [row] = await this.db.select({ status: campaigns.status, total: campaigns.total }).from(campaigns)
      .where(this.one(orgId, id)).for('update');
    return row;
  }

  /** The updated row: callers update a campaign they have read in their transaction. */
  override async update(orgId: string, id: string, changes: Partial<NewCampaignRow>): Promise<CampaignRow> {
    return (await super.update(orgId, id, changes))!;
  }

  /**
   * Moves contacts between counters (`{pending: -3, inProgress: +3}`), in the transaction that moves
   * the contacts themselves, so the counts always add up to `total`.
   */
  async shift(orgId: string, id: string, deltas: Partial<Record<Counter | 'total', number>>): Promise<CampaignRow> {
    const changes: Record<string, unknown> = { updatedAt: new Date() };
    for (const [name, n] of Object.entries(deltas)) {
      if (n) changes[name] = sql`${campaigns[name as Counter | 'total']} + ${n}`;
    }
    const [row] = await this.db.update(campaigns).set(changes).where(this.one(orgId, id)).returning();
    if (!row) throw new Error(`campaign ${id} not found while moving its counters`);
    return row;
  }

  /** Counts `n` new contacts (total and pending), in the transaction that inserts them, locked by `lockCounts`. */
  async countNewContacts(orgId: string, id: string, n: number): Promise<void> {
    await this.db.update(campaigns).set({ total: sql`${campaigns.total} + ${n}`, pending: sql`${campaigns.pending} + ${n}`, updatedAt: new Date() })
      .where(this.one(orgId, id));
  }

  /** What placing a campaign's call needs: its numbers and agent (from the call), the number's id (from the campaign). */
  async placement(orgId: string, id: string, callSid: string): Promise<{ agentId: string; toNumber: string; fromNumber: string; fromPhoneNumberId: string } | undefined> {
    const { rows } = await this.db.execute<{ agent_id: string; to_number: string; from_number: string; from_phone_number_id: string }>(sql`
      SELECT k.agent_id, k.to_number, k.from_number, c.from_phone_number_id
      FROM calls k JOIN campaigns c ON c.client_id = k.client_id AND c.id = k.campaign_id
      WHERE k.client_id = ${orgId} AND k.call_sid = ${callSid} AND k.campaign_id = ${id}`);
    const row = rows[0];
    return row && { agentId: row.agent_id, toNumber: row.to_number, fromNumber: row.from_number, fromPhoneNumberId: row.from_phone_number_id };
  }

  async delete(orgId: string, id: string): Promise<void> {
    await this.db.delete(campaigns).where(this.one(orgId, id));
  }

  /** Every running campaign (the periodic sweep restarts a dialer chain that was lost). Not organization-scoped: a system job. */
  async running(): Promise<Array<{ id: string; clientId: string }>> {
    return this.db.select({ id: campaigns.id, clientId: campaigns.clientId }).from(campaigns).where(eq(campaigns.status, 'running'));
  }
}
