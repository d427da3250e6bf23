import { closeTestEnv } from './helpers/env.ts';

// Runs in the same process as the tests (--test-isolation=none): closes the shared database.
export async function globalTeardown(): Promise<void> {
  await closeTestEnv();
}
