/**
 * `node src/db/embedded-init.ts <pgData>`: creates the embedded database's data directory (initdb)
 * and exits. Run by embedded.ts in a process of its own on the first start: initdb runs in a second,
 * temporary PGlite instance next to a bootstrap module, and what they allocate stays resident in the
 * process that ran them (WebAssembly memory and compiler arenas are not returned): 150 MB more in
 * the idle server when it ran there (docs/benchmarks.md, memory).
 */
import { openPGlite } from './pglite-engine.ts';

const pgData = process.argv[2];
if (!pgData) {
  process.stderr.write('usage: embedded-init.ts <pgData>\n');
  process.exit(2);
}
const db = await openPGlite(pgData);
await db.close();
