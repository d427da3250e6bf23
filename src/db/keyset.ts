import { and, asc, desc, eq, sql, type AnyColumn, type SQL } from 'drizzle-orm';

/** Where the next page starts: the sort value of the previous page's last row and its id. */
export interface KeysetPosition {
  value: string | number | Date;
  id: string;
}

export interface KeysetColumns {
  clientId: AnyColumn;
  sort: AnyColumn;
  id: AnyColumn;
}

/**
 * One page of an organization's rows in keyset order: the organization's rows (and `filter`) after
 * `after`, ordered by (sort, id). Served by an index on (client_id, sort, id).
 */
export function orgKeyset(
  columns: KeysetColumns,
  orgId: string,
  options: { direction: 'asc' | 'desc'; after?: KeysetPosition; filter?: SQL },
): { where: SQL; orderBy: SQL[] } {
  const { clientId, sort, id } = columns;
  let position: SQL | undefined;
  if (options.after) {
    const value = options.after.value instanceof Date ? sql`${options.after.value.toISOString()}::timestamptz` : sql`${options.after.value}`;
    // A row comparison, not `a > x OR (a = x AND b > y)`: PostgreSQL turns it into one index range,
    // so a deep page costs what the first page costs.
    position = options.direction === 'asc'
      ? sql`(${sort}, ${id}) > (${value}, ${options.after.id})`
      : sql`(${sort}, ${id}) < (${value}, ${options.after.id})`;
  }
  const direction = options.direction === 'asc' ? asc : desc;
  return { where: and(eq(clientId, orgId), options.filter, position)!, orderBy: [direction(sort), direction(id)] };
}

/** Newest first, by (created_at, id): the default order of every list. */
export function newestFirst(
  table: { clientId: AnyColumn; createdAt: AnyColumn; id: AnyColumn },
  orgId: string,
  before?: { at: Date; id: string },
): { where: SQL; orderBy: SQL[] } {
  return orgKeyset({ clientId: table.clientId, sort: table.createdAt, id: table.id }, orgId, {
    direction: 'desc', after: before && { value: before.at, id: before.id },
  });
}
