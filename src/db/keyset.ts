import { desc, sql, type AnyColumn, type SQL } from 'drizzle-orm';

/**
 * Newest-first keyset paging (created_at DESC, id DESC): the condition for rows after the
 * previous page's last row, and the matching order. Served by an index on (client_id, created_at, id).
 */
export function newestFirst(createdAt: AnyColumn, id: AnyColumn, before?: { at: Date; id: string }) {
  // A row comparison, not `a < x OR (a = x AND b < y)`: PostgreSQL turns it into one index range,
  // so a deep page costs what the first page costs.
  const after: SQL | undefined = before ? sql`(${createdAt}, ${id}) < (${before.at.toISOString()}::timestamptz, ${before.id})` : undefined;
  return { after, orderBy: [desc(createdAt), desc(id)] };
}
