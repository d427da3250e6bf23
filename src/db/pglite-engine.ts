import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { vector } from '@electric-sql/pglite-pgvector';

/**
 * PostgreSQL's buffer cache inside PGlite. PGlite starts with PostgreSQL's default, 128 MB, and the
 * whole of it is resident from the start (WebAssembly memory zeroed as it is handed out): 124 MB of
 * the embedded server's idle memory. With 32 MB the 10,000-call list took the same CPU per request
 * (docs/benchmarks.md, memory); pages it does not hold are read through the operating system's cache.
 */
const SHARED_BUFFERS = '32MB';

/** Opens (and on first use initializes) the PGlite database in `dataDir`, in memory when undefined. */
export function openPGlite(dataDir: string | undefined): Promise<PGlite> {
  return PGlite.create({
    dataDir,
    extensions: { vector, pg_trgm },
    startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${SHARED_BUFFERS}`],
  });
}
