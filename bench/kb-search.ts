/**
 * Knowledge-base hybrid search on PostgreSQL + pgvector (issue 33): one organization with
 * KB_CHUNKS chunks (default 100,000; 1,000,000 for the large shape) of 120 words each, 500 chunks a
 * document, embedded by the hashed embedder and seeded once per shape (reused on later runs), in one
 * transaction with the vector and full-text indexes rebuilt in bulk at the end.
 *
 * The texts draw words from a 5,000-word vocabulary with a skewed (squared uniform) distribution
 * from a 32-bit generator (bench/kb-corpus.ts): the previous generator multiplied past 2^53 and
 * cycled after about 10,500 draws, so its "100k chunks" held 5,278 distinct texts. The distinct texts and
 * queries are counted and recorded, as is how many chunks each common query matches.
 *
 * Two query classes, measured in interleaved rounds through `POST /api/knowledge-base/search`
 * (top_k 10, 4 connections, KB_ROUNDS rounds of KB_SECONDS each): six random words (rare: few
 * matches) and two of the 20 most frequent words (common: a large share of the index matches).
 * In the same rounds the old full-text half (every match ranked, no pool) runs alone through pg at 4
 * connections on the common queries, as the baseline the pool replaced. Reported: the median over
 * rounds of each round's p50 and p99. Results: bench/results/kb-search[-<chunks>].json.
 */
import autocannon from 'autocannon';
import pg from 'pg';
import { HashedEmbedder } from '../src/adapters/embedding/embedder.ts';
import { openDatabase, runMigrations } from '../src/db/database.ts';
import { newDocumentId } from '../src/core/ids.ts';
import { provisionOrganization } from '../src/modules/organizations/service.ts';
import { FULL_TEXT_POOL } from '../src/modules/knowledge-base/repository.ts';
import { benchQueries, sentences, vocabulary } from './kb-corpus.ts';
import { benchDatabaseUrl, loadAverage, machine, startChild, writeResult } from './lib.ts';

const CHUNKS = Number(process.env.KB_CHUNKS ?? 100_000);
const CHUNKS_PER_DOCUMENT = 500;
const DOCUMENTS = Math.ceil(CHUNKS / CHUNKS_PER_DOCUMENT);
const ROUNDS = Number(process.env.KB_ROUNDS ?? 5);
const SECONDS = Number(process.env.KB_SECONDS ?? 8);
const CONNECTIONS = 4;

const databaseUrl = await benchDatabaseUrl();
const database = await openDatabase({ databaseUrl, dataDir: '/tmp', poolSize: 4 });
await runMigrations(database);

const sentence = sentences();

const orgName = `kb search bench ${CHUNKS}`;
const existing = await database.pool.query('SELECT id FROM organizations WHERE name = $1', [orgName]);
let orgId: string = existing.rows[0]?.id;
const seeded = orgId
  ? (await database.pool.query('SELECT count(*)::int AS n FROM document_chunks WHERE client_id = $1', [orgId])).rows[0].n
  : 0;
const started = performance.now();
// KB_RESEED=1 seeds again (a new layout of the chunks table applies to rows written after it).
if (seeded !== CHUNKS || process.env.KB_RESEED === '1') {
  orgId ??= (await provisionOrganization(database.db, { name: orgName })).organization_id;
  await seed(orgId);
}

/**
 * Seeds the organization's documents in one transaction, so a run killed halfway leaves nothing
 * and the next run seeds again. The HNSW and GIN indexes are dropped first and rebuilt at the end
 * from their own definitions (read from pg_indexes, so they are exactly the migration's): a bulk
 * build is the same index, and inserting 1M rows into a live HNSW graph took over an hour here.
 */
async function seed(id: string): Promise<void> {
  const client = await database.pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('DELETE FROM documents WHERE client_id = $1', [id]);
    const { rows: indexes } = await client.query<{ indexname: string; indexdef: string }>(
      `SELECT indexname, indexdef FROM pg_indexes WHERE indexname IN ('document_chunks_embedding_idx', 'document_chunks_search_idx')`);
    for (const index of indexes) await client.query(`DROP INDEX ${index.indexname}`);
    const embedder = new HashedEmbedder();
    for (let d = 0; d < DOCUMENTS; d++) {
      const documentId = newDocumentId();
      await client.query(`INSERT INTO documents (id, client_id, name, type, format, size_bytes, processing_status, vector_count)
        VALUES ($1, $2, $3, 'text', 'txt', 0, 'completed', $4)`, [documentId, id, `Bench document ${d}`, CHUNKS_PER_DOCUMENT]);
      const texts = Array.from({ length: CHUNKS_PER_DOCUMENT }, () => sentence(120));
      const vectors = texts.map((t) => `[${embedder.embedOne(t).map((v) => v.toFixed(5)).join(',')}]`);
      await client.query(
        `INSERT INTO document_chunks (document_id, chunk_index, client_id, page, text, embedding)
         SELECT $1, i - 1, $2, NULL, t, v::vector FROM unnest($3::text[], $4::text[]) WITH ORDINALITY AS x(t, v, i)`,
        [documentId, id, texts, vectors],
      );
      if (d % 100 === 99) console.log(`seeded ${(d + 1) * CHUNKS_PER_DOCUMENT} chunks, ${((performance.now() - started) / 1000).toFixed(0)} s`);
    }
    // Room to build the graph in memory (1M vectors of 256 floats is about 1 GB).
    await client.query(`SET LOCAL maintenance_work_mem = '4GB'`);
    for (const index of indexes) {
      const at = performance.now();
      await client.query(index.indexdef);
      console.log(`rebuilt ${index.indexname} in ${((performance.now() - at) / 1000).toFixed(0)} s`);
    }
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  } finally {
    client.release();
  }
  await database.pool.query('ANALYZE document_chunks');
}
const seedSeconds = (performance.now() - started) / 1000;
const { rows: [shape] } = await database.pool.query(
  'SELECT count(*)::int AS chunks, count(DISTINCT md5(text))::int AS distinct_texts FROM document_chunks WHERE client_id = $1', [orgId]);

const { rare: rareQueries, common: commonQueries } = benchQueries();
const matches = async (q: string) => (await database.pool.query(
  "SELECT count(*)::int AS n FROM document_chunks WHERE client_id = $1 AND search_vector @@ websearch_to_tsquery('simple', $2)", [orgId, q])).rows[0].n as number;
const commonMatches = await Promise.all(commonQueries.slice(0, 5).map(matches));
const rareMatches = await Promise.all(rareQueries.slice(0, 5).map(matches));

const { issueApiKey } = await import('../src/modules/api-keys/service.ts');
const { rows: [owner] } = await database.pool.query('SELECT user_id FROM memberships WHERE client_id = $1 LIMIT 1', [orgId]);
const apiKey = (await issueApiKey(database.db, orgId, { userId: owner.user_id, name: 'bench', role: 'user' })).key;

/** The full-text half before the pool: every matching chunk ranked, then the best 40. */
const UNBOUNDED = `SELECT c.document_id, c.chunk_index FROM document_chunks c, websearch_to_tsquery('simple', $2) q
  WHERE c.client_id = $1 AND c.search_vector @@ q ORDER BY ts_rank_cd(c.search_vector, q) DESC LIMIT 40`;

async function unboundedRound(): Promise<{ p50: number; p99: number; requests: number }> {
  const latencies: number[] = [];
  const until = performance.now() + SECONDS * 1000;
  let next = 0;
  await Promise.all(Array.from({ length: CONNECTIONS }, async () => {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    while (performance.now() < until) {
      const at = performance.now();
      await client.query(UNBOUNDED, [orgId, commonQueries[next++ % commonQueries.length]]);
      latencies.push(performance.now() - at);
    }
    await client.end();
  }));
  latencies.sort((a, b) => a - b);
  const at = (p: number) => Number(latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))]!.toFixed(1));
  return { p50: at(0.5), p99: at(0.99), requests: latencies.length };
}

async function appRound(url: string, queries: string[]) {
  let i = 0;
  const result = await autocannon({
    url, method: 'POST', connections: CONNECTIONS, duration: SECONDS,
    headers: { 'x-api-key': apiKey, 'x-organization-id': orgId, 'content-type': 'application/json' },
    setupClient: (client) => client.setBody(JSON.stringify({ query: queries[i++ % queries.length], top_k: 10 })),
  });
  if (result.non2xx || result.errors) throw new Error(`${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return { p50: result.latency.p50, p99: result.latency.p99, requests: result.requests.total };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : Number(((sorted[mid - 1]! + sorted[mid]!) / 2).toFixed(1));
};

const before = machine();
const app = await startChild('app', { DATABASE_URL: databaseUrl, IN_PROCESS_WORKER: 'false' });
const rounds: Array<Record<string, { p50: number; p99: number; requests: number }>> = [];
try {
  const url = `${app.url}/api/knowledge-base/search`;
  await appRound(url, rareQueries.slice(0, 10)); // warm-up
  for (let r = 0; r < ROUNDS; r++) {
    const round = { rare: await appRound(url, rareQueries), common: await appRound(url, commonQueries), common_unbounded_sql: await unboundedRound() };
    rounds.push(round);
    console.log(`round ${r + 1}: ${JSON.stringify(round)}`);
  }
} finally {
  await app.stop();
  await database.close();
}

const summary = (key: string) => ({
  p50_ms: median(rounds.map((r) => r[key]!.p50)), p99_ms: median(rounds.map((r) => r[key]!.p99)),
  per_second: Math.round(median(rounds.map((r) => r[key]!.requests)) / SECONDS),
});
const out = {
  ...before,
  load_after: loadAverage(),
  database: 'PostgreSQL 15 + pgvector (HNSW, cosine) on the same 2 cores',
  shape: { chunks: shape.chunks, distinct_texts: shape.distinct_texts, documents: DOCUMENTS, words_per_chunk: 120, vocabulary: vocabulary.length },
  seed_seconds: Number(seedSeconds.toFixed(1)),
  full_text_pool: FULL_TEXT_POOL,
  queries: {
    rare: { distinct: rareQueries.length, words: 6, matching_chunks_of_first_five: rareMatches },
    common: { distinct: commonQueries.length, words: 2, from_top: 20, matching_chunks_of_first_five: commonMatches },
  },
  load: { connections: CONNECTIONS, rounds: ROUNDS, seconds_per_round: SECONDS, top_k: 10, interleaved: 'rare, common (app), common unbounded full-text (SQL alone) per round' },
  medians_over_rounds: { rare: summary('rare'), common: summary('common'), common_unbounded_full_text_sql: summary('common_unbounded_sql') },
  targets: { common_p50_ms: 50, common_p99_ms: 150 },
  rounds,
};
console.log(JSON.stringify(out.medians_over_rounds, null, 2));
console.log(`written to ${writeResult(CHUNKS === 100_000 ? 'kb-search' : `kb-search-${CHUNKS}`, out)}`);
