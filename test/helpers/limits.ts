import { testEnv } from './env.ts';

/** The operator's setting, written as `switchboard org:limits` does (the CLI itself is tested in limits.test.ts). */
export async function setConcurrencyLimit(orgId: string, max: number): Promise<void> {
  const { database } = await testEnv();
  await database.pool.query('UPDATE organizations SET max_concurrent_calls = $2 WHERE id = $1', [orgId, max]);
}
