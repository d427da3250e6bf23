import { sql } from 'drizzle-orm';
import type { Executor } from '../../../db/database.ts';
import { PREVIEW_TO_NUMBER } from './sessions.ts';

/**
 * Preview calls made by preview sessions that are lost as of the two instants (sweep.ts): still
 * `queued` since before `queuedBefore`, or `in_progress` with no report since `silentSince`. Across
 * organizations, as the campaign sweep (the partial index of active calls keeps this small), or of
 * one when `orgId` is given; with `callSid` too, that one call, locked to the end of the transaction.
 */
export async function lostPreviewCalls(
  db: Executor, since: { queuedBefore: Date; silentSince: Date }, orgId?: string, callSid?: string,
): Promise<Array<{ client_id: string; call_sid: string; status: string }>> {
  const { rows } = await db.execute<{ client_id: string; call_sid: string; status: string }>(sql`
      SELECT client_id, call_sid, status FROM calls
      WHERE status IN ('queued', 'in_progress') AND call_type = 'preview' AND to_number = ${PREVIEW_TO_NUMBER}
        AND ((status = 'queued' AND created_at < ${since.queuedBefore}) OR (status = 'in_progress' AND updated_at < ${since.silentSince}))
        ${orgId ? sql`AND client_id = ${orgId}` : sql``} ${callSid ? sql`AND call_sid = ${callSid} FOR UPDATE` : sql``}`);
  return rows;
}
