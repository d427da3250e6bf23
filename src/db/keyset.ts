import { and, desc, eq, lt, or, type AnyColumn, type SQL } from 'drizzle-orm';

/**
 * Newest-first keyset paging (created_at DESC, id DESC): the condition for rows after the
 * previous page's last row, and the matching order. Served by an index on (client_id, created_at, id).
 */
export function newestFirst(createdAt: AnyColumn, id: AnyColumn, before?: { at: Date; id: string }) {
  const after: SQL | undefined = before
    ? or(lt(createdAt, before.at), and(eq(createdAt, before.at), lt(id, before.id)))
    : undefined;
  return { after, orderBy: [desc(createdAt), desc(id)] };
}
