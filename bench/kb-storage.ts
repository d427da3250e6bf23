/**
 * What keeping a chunk's tsvector in its row (migration 0032, storage MAIN) does to the full-text
 * half of knowledge-base search, against PostgreSQL's default layout (EXTENDED, where the tsvector,
 * the widest column of a ~3 KB row, is the one moved out of line to TOAST).
 *
 * Needs `bench/kb-search.ts` seeded first (KB_CHUNKS, default 1,000,000). KB_STORAGE_ROWS of its
 * chunks (default 200,000) are copied into two tables, identical but for that column's storage,
 * each with the client_id index search scans by; then the full-text half as the repository runs it
 * (the first FULL_TEXT_POOL matches, ranked, best 40) for 100 of bench/kb-search.ts's common-word
 * queries, one client, the two tables alternating over KB_STORAGE_ROUNDS rounds. Reported: the
 * median over rounds of each round's p50 and p99, and each table's heap and TOAST sizes.
 * Results: bench/results/kb-storage.json.
 */
import pg from 'pg';
import { FULL_TEXT_POOL } from '../src/modules/knowledge-base/repository.ts';
import { benchQueries } from './kb-corpus.ts';
import { benchDatabaseUrl, loadAverage, machine, median, writeResult } from './lib.ts';

const CHUNKS = Number(process.env.KB_CHUNKS ?? 1_000_000);
const ROWS = Number(process.env.KB_STORAGE_ROWS ?? 200_000);
const ROUNDS = Number(process.env.KB_STORAGE_ROUNDS ?? 5);
const LAYOUTS = { extended: 'EXTENDED', main: 'MAIN' } as const;

const client = new pg.Client({ connectionString: await benchDatabaseUrl() });
await client.connect();
const { rows: [org] } = await client.query('SELECT id FROM organizations WHERE name = $1', [`kb search bench ${CHUNKS}`]);
if (!org) throw new Error(`seed it first: KB_CHUNKS=${CHUNKS} bench/kb-search.ts`);

// The same common-word queries as bench/kb-search.ts.
const common = benchQueries().common.slice(0, 100);

const sizes: Record<string, { heap_mb: number; toast_mb: number }> = {};
for (const [name, storage] of Object.entries(LAYOUTS)) {
  const table = `kb_storage_${name}`;
  await client.query(`DROP TABLE IF EXISTS ${table}`);
  await client.query(`CREATE TABLE ${table} (document_id text, chunk_index int, client_id text, text text, embedding vector(256), search_vector tsvector)`);
  await client.query(`ALTER TABLE ${table} ALTER COLUMN search_vector SET STORAGE ${storage}`);
  await client.query(`INSERT INTO ${table} SELECT document_id, chunk_index, client_id, text, embedding, search_vector
    FROM document_chunks WHERE client_id = $1 ORDER BY document_id, chunk_index LIMIT ${ROWS}`, [org.id]);
  await client.query(`CREATE INDEX ON ${table} (client_id)`);
  await client.query(`VACUUM ANALYZE ${table}`);
  const { rows: [size] } = await client.query(`SELECT pg_relation_size(oid) AS heap, pg_relation_size(reltoastrelid) AS toast FROM pg_class WHERE relname = $1`, [table]);
  sizes[name] = { heap_mb: Math.round(size.heap / 2 ** 20), toast_mb: Math.round(size.toast / 2 ** 20) };
}

// As the repository writes it: the tsquery inline, so the planner estimates from its value.
const fullTextHalf = (table: string) => `
  SELECT p.document_id, p.chunk_index FROM (
    SELECT c.document_id, c.chunk_index, c.search_vector FROM ${table} c
    WHERE c.client_id = $1 AND c.search_vector @@ websearch_to_tsquery('simple', $2) LIMIT ${FULL_TEXT_POOL}
  ) p
  ORDER BY ts_rank_cd(p.search_vector, websearch_to_tsquery('simple', $2)) DESC, p.document_id, p.chunk_index LIMIT 40`;

const before = machine();
const rounds: Array<Record<string, { p50: number; p99: number }>> = [];
for (let r = 0; r < ROUNDS; r++) {
  const round: Record<string, { p50: number; p99: number }> = {};
  // Alternate which layout goes first, so neither always inherits the other's cache.
  for (const name of r % 2 ? ['main', 'extended'] : ['extended', 'main']) {
    const times: number[] = [];
    for (const q of common) {
      const at = performance.now();
      await client.query(fullTextHalf(`kb_storage_${name}`), [org.id, q]);
      times.push(performance.now() - at);
    }
    times.sort((a, b) => a - b);
    round[name] = { p50: Number(times[Math.floor(times.length / 2)]!.toFixed(1)), p99: Number(times[Math.floor(times.length * 0.99)]!.toFixed(1)) };
  }
  rounds.push(round);
  console.log(`round ${r + 1}: ${JSON.stringify(round)}`);
}
for (const name of Object.keys(LAYOUTS)) await client.query(`DROP TABLE kb_storage_${name}`);
await client.end();

const summary = Object.fromEntries(Object.keys(LAYOUTS).map((name) => [name, {
  p50_ms: median(rounds.map((r) => r[name]!.p50)), p99_ms: median(rounds.map((r) => r[name]!.p99)), ...sizes[name],
}]));
const out = {
  ...before, load_after: loadAverage(),
  what: `the full-text half of knowledge-base search (first ${FULL_TEXT_POOL} matches, ranked, best 40), one client, ${common.length} common-word queries a round`,
  rows: ROWS, rounds: ROUNDS, medians_over_rounds: summary, all_rounds: rounds,
};
console.log(JSON.stringify(summary, null, 2));
console.log(`written to ${writeResult('kb-storage', out)}`);
