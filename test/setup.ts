// Runs in the same process as the tests (--test-isolation=none): closes the shared database, then
// fails the run if any answer of the run broke the OpenAPI document (test/helpers/contract.ts).
//
// The helpers are imported when the run ends, not at the top: the runner loads this file before
// `--import ./src/module-hooks.ts` takes effect, so a static import here would load the app's modules
// without the hooks (the SDK from its published build instead of its sources, a second copy of every
// class) and the test files would share those copies.
export async function globalTeardown(): Promise<void> {
  const { closeTestEnv } = await import('./helpers/env.ts');
  const { contractViolations } = await import('./helpers/contract.ts');
  await closeTestEnv();
  if (contractViolations.length) {
    const distinct = [...new Set(contractViolations)];
    process.stderr.write(`\n${distinct.length} kinds of answers broke the OpenAPI document (${contractViolations.length} answers):\n${distinct.slice(0, 50).join('\n')}\n`);
    process.exitCode = 1;
    throw new Error('Answers broke the OpenAPI document');
  }
}
