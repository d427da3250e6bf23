import type { Database } from '../../db/database.ts';

/** The cheapest statement the database answers: readiness asks nothing more of it. */
export async function pingDatabase(database: Pick<Database, 'pool'>): Promise<void> {
  await database.pool.query('SELECT 1');
}
