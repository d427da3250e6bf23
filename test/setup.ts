import { closeTestEnv } from './helpers/env.ts';
import { contractViolations } from './helpers/contract.ts';

// Runs in the same process as the tests (--test-isolation=none): closes the shared database, then
// fails the run if any answer of the run broke the OpenAPI document (test/helpers/contract.ts).
export async function globalTeardown(): Promise<void> {
  await closeTestEnv();
  if (contractViolations.length) {
    const distinct = [...new Set(contractViolations)];
    process.stderr.write(`\n${distinct.length} kinds of answers broke the OpenAPI document (${contractViolations.length} answers):\n${distinct.slice(0, 50).join('\n')}\n`);
    process.exitCode = 1;
    throw new Error('Answers broke the OpenAPI document');
  }
}
