import { and, asc, eq, gt, lte, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../db/database.ts';
import { calls, campaignContacts, type CallError } from '../../db/schema/index.ts';

export type ContactRow = typeof campaignContacts.$inferSelect;
/** A contact as its listing shows it: with the `error` of its last call (why it failed, when a provider or the runtime said). */
export type ListedContact = ContactRow & { error: CallError | null };
export type NewContact = { row: number; phoneNumber: string; variables: Record<string, string> };

/** Contacts in row order as the one JSON parameter `insertBatch` unpacks (`ContactRepository.batch`). */
export type ContactBatch = { readonly json: string };

/** What became of a batch: how many were added, the rows whose number the campaign already had, the rows past the limit. */
export type BatchOutcome = { inserted: number; duplicates: number[]; overLimit: number[] };

/** A row of the results CSV: the contact and its last call. */
export type ResultRow = {
  id: number;
  phone_number: string;
  variables: Record<string, string>;
  status: string;
  attempts: number;
  last_call_sid: string | null;
  last_outcome: string | null;
  duration_seconds: number | null;
  total_cost: string | null;
};

/** Contacts of one organization's campaigns: every method takes the organization id first. */
export class ContactRepository {
  readonly #db: Executor;
  constructor(db: Executor) {
    this.#db = db;
  }

  /**
   * The batch as one JSON parameter, unpacked by the database: a 1,000-row batch is one bound value
   * instead of 5,000. Made before the transaction, so the batch's row objects are not kept alive
   * while the upload waits on the database (a garbage collection then would copy them to the old
   * generation, where they stay until a full collection).
   */
  static batch(contacts: NewContact[]): ContactBatch {
    return { json: JSON.stringify(contacts) };
  }

  /**
   * Inserts the first `room` rows of a batch in row order (ids keep the upload order); a number the
   * campaign already has, or an earlier row of the batch has, is not inserted (its unique index).
   * The answer is one row whatever the batch's size: a count and the row numbers left out.
   */
  insertBatch(orgId: string, campaignId: string, batch: ContactBatch, room: number): Promise<BatchOutcome> {
    return this.#insert(orgId, campaignId, sql`
      SELECT t."row", t."phoneNumber", t.variables
        FROM jsonb_to_recordset(${batch.json}::jsonb) AS t("row" integer, "phoneNumber" text, variables jsonb)`, room);
  }

  /** Stages a batch of an upload still arriving (campaign_contact_staging); autocommitted, it locks nothing of the campaign. */
  async stage(orgId: string, campaignId: string, uploadId: string, batchNumber: number, batch: ContactBatch): Promise<void> {
    await this.#db.execute(sql`
      INSERT INTO campaign_contact_staging (upload_id, client_id, campaign_id, batch, "row", phone_number, variables)
      SELECT ${uploadId}, ${orgId}, ${campaignId}, ${batchNumber}, t."row", t."phoneNumber", t.variables
        FROM jsonb_to_recordset(${batch.json}::jsonb) AS t("row" integer, "phoneNumber" text, variables jsonb)`);
  }

  /** `insertBatch` of a staged batch of the upload. */
  moveStagedBatch(orgId: string, campaignId: string, uploadId: string, batchNumber: number, room: number): Promise<BatchOutcome> {
    return this.#insert(orgId, campaignId, sql`
      SELECT s."row", s.phone_number AS "phoneNumber", s.variables FROM campaign_contact_staging s
       WHERE s.upload_id = ${uploadId} AND s.batch = ${batchNumber} AND s.client_id = ${orgId} AND s.campaign_id = ${campaignId}`, room);
  }

  /** Deletes the upload's staged rows (moved, or the upload failed). */
  async dropStaged(orgId: string, uploadId: string): Promise<void> {
    await this.#db.execute(sql`DELETE FROM campaign_contact_staging WHERE upload_id = ${uploadId} AND client_id = ${orgId}`);
  }

  async #insert(orgId: string, campaignId: string, source: SQL, room: number): Promise<BatchOutcome> {
    const { rows: [result] } = await this.#db.execute<{ inserted: number; duplicates: number[]; over_limit: number[] }>(sql`
      WITH batch AS (${source}), within AS (
        SELECT * FROM batch ORDER BY "row" LIMIT ${room}
      ), added AS (
        INSERT INTO campaign_contacts (campaign_id, client_id, "row", phone_number, variables)
        SELECT ${campaignId}, ${orgId}, w."row", w."phoneNumber", w.variables FROM within w ORDER BY w."row"
        ON CONFLICT DO NOTHING
        RETURNING "row"
      )
      SELECT (SELECT count(*) FROM added)::int AS inserted,
             coalesce((SELECT array_agg(w."row" ORDER BY w."row") FROM within w WHERE w."row" NOT IN (SELECT "row" FROM added)), '{}') AS duplicates,
             coalesce((SELECT array_agg(b."row" ORDER BY b."row") FROM batch b WHERE b."row" NOT IN (SELECT "row" FROM within)), '{}') AS over_limit`);
    return { inserted: Number(result!.inserted), duplicates: result!.duplicates.map(Number), overLimit: result!.over_limit.map(Number) };
  }

  async list(orgId: string, campaignId: string, options: { status?: string; afterId?: number; limit: number }): Promise<ListedContact[]> {
    const rows = await this.#db.select({ contact: campaignContacts, error: calls.error }).from(campaignContacts)
      // The last attempt's call, as the results export joins it.
      .leftJoin(calls, and(eq(calls.clientId, campaignContacts.clientId), sql`${calls.callSid} = ${campaignContacts.callSids}->>-1`))
      .where(and(
      eq(campaignContacts.clientId, orgId), eq(campaignContacts.campaignId, campaignId),
      options.status ? eq(campaignContacts.status, options.status) : undefined,
      options.afterId !== undefined ? gt(campaignContacts.id, options.afterId) : undefined,
    )).orderBy(asc(campaignContacts.id)).limit(options.limit);
    return rows.map(({ contact, error }) => ({ ...contact, error: error ?? null }));
  }

  /**
   * Locks up to `limit` contacts to call now: retries that are due first, then pending contacts in
   * upload order. SKIP LOCKED: a contact another transaction is moving is left for the next tick.
   */
  async claimDue(orgId: string, campaignId: string, now: Date, limit: number): Promise<ContactRow[]> {
    if (limit <= 0) return [];
    const base = and(eq(campaignContacts.clientId, orgId), eq(campaignContacts.campaignId, campaignId));
    const retries = await this.#db.select().from(campaignContacts)
      .where(and(base, eq(campaignContacts.status, 'retrying'), lte(campaignContacts.nextAttemptAt, now)))
      .orderBy(asc(campaignContacts.id)).limit(limit).for('update', { skipLocked: true });
    if (retries.length >= limit) return retries;
    const pending = await this.#db.select().from(campaignContacts)
      .where(and(base, eq(campaignContacts.status, 'pending')))
      .orderBy(asc(campaignContacts.id)).limit(limit - retries.length).for('update', { skipLocked: true });
    return [...retries, ...pending];
  }

  /** When the next retry of the campaign is due (null when none waits). */
  async nextRetryAt(orgId: string, campaignId: string): Promise<Date | null> {
    const [row] = await this.#db.select({ at: sql<string | null>`min(${campaignContacts.nextAttemptAt})` }).from(campaignContacts)
      .where(and(eq(campaignContacts.clientId, orgId), eq(campaignContacts.campaignId, campaignId), eq(campaignContacts.status, 'retrying')));
    return row?.at ? new Date(row.at) : null;
  }

  async findById(orgId: string, campaignId: string, id: number, options: { forUpdate?: boolean } = {}): Promise<ContactRow | undefined> {
    const query = this.#db.select().from(campaignContacts)
      .where(and(eq(campaignContacts.clientId, orgId), eq(campaignContacts.campaignId, campaignId), eq(campaignContacts.id, id)));
    const [row] = options.forUpdate ? await query.for('update') : await query;
    return row;
  }

  /** The contact whose attempt in flight is this call, locked. */
  async findByCurrentCall(orgId: string, campaignId: string, callSid: string): Promise<ContactRow | undefined> {
    const [row] = await this.#db.select().from(campaignContacts).where(and(
      eq(campaignContacts.clientId, orgId), eq(campaignContacts.campaignId, campaignId), eq(campaignContacts.currentCallSid, callSid),
    )).for('update');
    return row;
  }

  async update(orgId: string, id: number, changes: Partial<typeof campaignContacts.$inferInsert>): Promise<void> {
    await this.#db.update(campaignContacts).set({ ...changes, updatedAt: new Date() })
      .where(and(eq(campaignContacts.clientId, orgId), eq(campaignContacts.id, id)));
  }

  /** Starts an attempt: the contact is in progress with this call, its placement job queued. */
  async startAttempt(orgId: string, id: number, callSid: string): Promise<void> {
    await this.#db.update(campaignContacts).set({
      status: 'in_progress', attempts: sql`${campaignContacts.attempts} + 1`,
      callSids: sql`${campaignContacts.callSids} || ${JSON.stringify([callSid])}::jsonb`,
      currentCallSid: callSid, placement: 'queued', nextAttemptAt: null, updatedAt: new Date(),
    }).where(and(eq(campaignContacts.clientId, orgId), eq(campaignContacts.id, id)));
  }

  /** The attempt's call was placed: only while the contact is still placing that very call. */
  async markPlaced(orgId: string, id: number, callSid: string): Promise<void> {
    await this.#db.execute(sql`UPDATE campaign_contacts SET placement = 'placed', updated_at = now()
      WHERE client_id = ${orgId} AND id = ${id} AND current_call_sid = ${callSid} AND placement = 'placing'`);
  }

  /** Skips every contact still waiting (pending or retrying); returns how many of each. */
  async skipWaiting(orgId: string, campaignId: string): Promise<{ pending: number; retrying: number }> {
    const { rows } = await this.#db.execute<{ status: string; n: number }>(sql`
      WITH skipped AS (
        UPDATE campaign_contacts c SET status = 'skipped', next_attempt_at = NULL, updated_at = now()
        FROM (SELECT id, status FROM campaign_contacts
              WHERE client_id = ${orgId} AND campaign_id = ${campaignId} AND status IN ('pending', 'retrying') FOR UPDATE) old
        WHERE c.id = old.id RETURNING old.status
      ) SELECT status, count(*)::int AS n FROM skipped GROUP BY status`);
    const out = { pending: 0, retrying: 0 };
    for (const r of rows) out[r.status as 'pending' | 'retrying'] = Number(r.n);
    return out;
  }

  /** The variable names of the campaign's contacts, sorted (the results CSV's columns). */
  async variableNames(orgId: string, campaignId: string): Promise<string[]> {
    const { rows } = await this.#db.execute<{ name: string }>(sql`
      SELECT DISTINCT jsonb_object_keys(variables) AS name FROM campaign_contacts
      WHERE client_id = ${orgId} AND campaign_id = ${campaignId} ORDER BY name`);
    return rows.map((r) => r.name);
  }

  /** A page of results in upload order, each with its last call's duration and cost. */
  async results(orgId: string, campaignId: string, afterId: number, limit: number): Promise<ResultRow[]> {
    const { rows } = await this.#db.execute<ResultRow>(sql`
      SELECT c.id, c.phone_number, c.variables, c.status, c.attempts, c.call_sids->>-1 AS last_call_sid, c.last_outcome,
             k.duration_seconds, k.total_cost::text AS total_cost
      FROM campaign_contacts c
      LEFT JOIN calls k ON k.client_id = c.client_id AND k.call_sid = c.call_sids->>-1
      WHERE c.client_id = ${orgId} AND c.campaign_id = ${campaignId} AND c.id > ${afterId}
      ORDER BY c.id LIMIT ${limit}`);
    return rows.map((r) => ({ ...r, id: Number(r.id) }));
  }
}

/**
 * Deletes the staged rows of uploads that stopped staging before `before` (their process died
 * mid-upload; an upload alive stages a batch at least every few seconds, and its body times out far
 * sooner). Not an organization's query: the cleanup job's, over every organization. Returns how many.
 */
export async function deleteAbandonedStaging(db: Executor, before: Date): Promise<number> {
  const { rows } = await db.execute<{ n: number }>(sql`
    WITH gone AS (
      DELETE FROM campaign_contact_staging WHERE upload_id IN (
        SELECT upload_id FROM campaign_contact_staging GROUP BY upload_id HAVING max(staged_at) < ${before.toISOString()}::timestamptz)
      RETURNING 1
    ) SELECT count(*)::int AS n FROM gone`);
  return Number(rows[0]?.n ?? 0);
}
