import { sql } from 'drizzle-orm';
import type { Executor } from '../../db/database.ts';
import type { OrgCallCapacity } from './dialer.ts';

/** extensions.md §6: an organization's default `max_concurrent_calls`. */
const DEFAULT_MAX_CONCURRENT_CALLS = 10;

/**
 * The organization's room for more active calls (calls not yet final), until the telephony work's
 * limits service (per-organization `max_concurrent_calls`) is bound in its place. The transaction
 * first takes an advisory lock on the organization, so two campaigns of one organization decide
 * one after the other and cannot both take the last free place.
 */
export class ActiveCallCapacity implements OrgCallCapacity {
  async available(within: Executor, orgId: string): Promise<number> {
    await within.execute(sql`SELECT pg_advisory_xact_lock(hashtextextended(${`org-calls:${orgId}`}, 0))`);
    const { rows } = await within.execute<{ n: number }>(sql`
      SELECT count(*)::int AS n FROM calls WHERE client_id = ${orgId} AND status IN ('queued', 'ringing', 'in_progress')`);
    return DEFAULT_MAX_CONCURRENT_CALLS - Number(rows[0]?.n ?? 0);
  }
}
