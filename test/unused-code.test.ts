import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';

const ROOT = path.resolve(import.meta.dirname, '..');

/**
 * Dead code stays out (knip.json): no file nothing imports, no export nothing uses, no dependency
 * nothing imports and none imported but unlisted, across the server, the runtime, the SDK and the
 * console. Entries are the process entries, the benchmarks, the scripts and the tests.
 */
test('knip finds no unused file, export or dependency', async () => {
  const run = await promisify(execFile)(process.execPath, [path.join(ROOT, 'node_modules/knip/bin/knip.js'), '--no-progress', '--reporter', 'compact'], { cwd: ROOT })
    .then(({ stdout }) => ({ code: 0, out: stdout }), (err: { code: number; stdout: string; stderr: string }) => ({ code: err.code, out: `${err.stdout}${err.stderr}` }));
  assert.equal(run.out.trim(), '', run.out);
  assert.equal(run.code, 0);
});
