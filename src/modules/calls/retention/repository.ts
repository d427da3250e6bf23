import { sql } from 'drizzle-orm';
import type { Executor } from '../../../db/database.ts';

/**
 * The deletions of the data retention policy on one organization's calls (extensions.md §7):
 * every method takes the organization id first and works on a bounded batch, so a sweep over a
 * large organization is many short transactions. The call rows stay, marked.
 */
export class CallRetentionRepository {
  readonly #db: Executor;
  constructor(db: Executor) {
    this.#db = db;
  }

  /** Deletes the transcripts of calls created before `cutoff`; the sids of the calls it changed. */
  async eraseTranscripts(orgId: string, cutoff: Date, limit: number, now: Date): Promise<string[]> {
    const result = await this.#db.execute<{ call_sid: string }>(sql`
      UPDATE calls SET transcript = NULL, transcript_deleted_at = ${now}, updated_at = ${now}
      WHERE client_id = ${orgId} AND call_sid IN (
        SELECT call_sid FROM calls
        WHERE client_id = ${orgId} AND created_at < ${cutoff} AND transcript_deleted_at IS NULL
          AND transcript IS NOT NULL AND jsonb_array_length(transcript) > 0
        LIMIT ${limit} FOR UPDATE SKIP LOCKED)
      RETURNING call_sid`);
    return result.rows.map((r) => r.call_sid);
  }

  /**
   * Marks the recordings of calls created before `cutoff` as deleted (their routes answer 404 from
   * this commit on) and returns them with their object keys, which the caller deletes next.
   */
  async markRecordingsDeleted(orgId: string, cutoff: Date, limit: number, now: Date): Promise<Array<{ call_sid: string; recording_key: string }>> {
    const result = await this.#db.execute<{ call_sid: string; recording_key: string }>(sql`
      UPDATE calls SET recording_deleted_at = ${now}, updated_at = ${now}
      WHERE client_id = ${orgId} AND call_sid IN (
        SELECT call_sid FROM calls
        WHERE client_id = ${orgId} AND created_at < ${cutoff} AND recording_deleted_at IS NULL AND recording_key IS NOT NULL
        LIMIT ${limit} FOR UPDATE SKIP LOCKED)
      RETURNING call_sid, recording_key`);
    return result.rows;
  }

  /** Recordings marked deleted whose object a crashed sweep may not have removed yet. */
  async markedRecordings(orgId: string, limit: number): Promise<Array<{ call_sid: string; recording_key: string }>> {
    const result = await this.#db.execute<{ call_sid: string; recording_key: string }>(sql`
      SELECT call_sid, recording_key FROM calls
      WHERE client_id = ${orgId} AND recording_deleted_at IS NOT NULL AND recording_key IS NOT NULL
      LIMIT ${limit}`);
    return result.rows;
  }

  /** Forgets a deleted recording's object, unless a new recording replaced it meanwhile. */
  async forgetRecording(orgId: string, callSid: string, key: string): Promise<void> {
    await this.#db.execute(sql`
      UPDATE calls SET recording_key = NULL, recording_content_type = NULL, recording_bytes = NULL
      WHERE client_id = ${orgId} AND call_sid = ${callSid} AND recording_key = ${key} AND recording_deleted_at IS NOT NULL`);
  }
}
