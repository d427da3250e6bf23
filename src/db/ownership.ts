import { eq } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import type { Executor } from './database.ts';

/**
 * Whether `id` names a record of some organization other than `orgId`. Only for the routes where
 * the specification answers 403 rather than 404 (tool update, the integration of a phone import,
 * phone number delete); it reveals nothing but existence.
 */
export async function belongsToAnotherOrganization(
  db: Executor,
  table: PgTable & { id: PgColumn; clientId: PgColumn },
  orgId: string,
  id: string,
): Promise<boolean> {
  const [row] = await db.select({ clientId: table.clientId }).from(table).where(eq(table.id, id)).limit(1);
  return row !== undefined && row.clientId !== orgId;
}
