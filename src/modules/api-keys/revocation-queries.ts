import { sql } from 'drizzle-orm';
import type pg from 'pg';
import type { Executor } from '../../db/database.ts';

/**
 * The SQL of shared revocations (revocations.ts): the numbering and NOTIFY of a revocation, and
 * the `credential_listeners` row each process keeps over its own LISTEN connection. Platform-wide
 * rows, bound to no organization: a revocation must reach every process, whoever's key it was.
 */
const CHANNEL = 'credential_revocations';
const REVOCATION_LOCK = 7314003;

/**
 * Numbers a revocation in the revoking transaction and notifies it at commit. The lock is held to
 * commit, so revocations commit in the order of their numbers: notifications arrive in commit order,
 * and a listener that recorded number n has applied every revocation up to n.
 */
export async function announceRevocation(within: Executor): Promise<number> {
  await within.execute(sql`SELECT pg_advisory_xact_lock(${REVOCATION_LOCK})`);
  const { rows } = await within.execute<{ seq: string }>(sql`SELECT nextval('credential_revocations')::text AS seq`);
  const seq = Number(rows[0]!.seq);
  await within.execute(sql`SELECT pg_notify(${CHANNEL}, ${String(seq)})`);
  return seq;
}

/** How many listeners alive within `liveSeconds` have not yet recorded revocation `seq`. */
export async function listenersBehind(db: Executor, seq: number, liveSeconds: number): Promise<number> {
  const { rows } = await db.execute<{ waiting: number }>(sql`
    SELECT count(*)::int AS waiting FROM credential_listeners
     WHERE heartbeat_at > now() - make_interval(secs => ${liveSeconds}) AND seen_seq < ${seq}`);
  return rows[0]!.waiting;
}

/**
 * On the listener's connection: listens for revocations, drops the rows of processes long gone, and
 * registers `id` as having seen every revocation so far (its cache starts empty).
 */
export async function listenForRevocations(client: pg.Client, id: string): Promise<void> {
  await client.query(`LISTEN ${CHANNEL}`);
  await client.query("DELETE FROM credential_listeners WHERE heartbeat_at < now() - interval '1 hour'");
  await client.query(
    `INSERT INTO credential_listeners (id, seen_seq, heartbeat_at)
     SELECT $1, (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM credential_revocations), now()
     ON CONFLICT (id) DO UPDATE SET seen_seq = excluded.seen_seq, heartbeat_at = now()`,
    [id],
  );
}

/** The listener `id` has applied revocation `seq` (and so every one before it). */
export async function recordSeen(client: pg.Client, id: string, seq: number): Promise<void> {
  await client.query('UPDATE credential_listeners SET seen_seq = greatest(seen_seq, $2), heartbeat_at = now() WHERE id = $1', [id, seq]);
}

/** The listener `id` is alive; false when its row is gone. */
export async function heartbeat(client: pg.Client, id: string): Promise<boolean> {
  const { rowCount } = await client.query('UPDATE credential_listeners SET heartbeat_at = now() WHERE id = $1', [id]);
  return rowCount === 1;
}

export async function forgetListener(client: pg.Client, id: string): Promise<void> {
  await client.query('DELETE FROM credential_listeners WHERE id = $1', [id]);
}
