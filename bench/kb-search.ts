/**
 * Knowledge-base search latency at 100k chunks on PostgreSQL (target p50 < 50 ms): one
 * organization with 200 documents × 500 chunks embedded by the hashed embedder, seeded once
 * (reused on later runs), then `POST /api/knowledge-base/search` under autocannon.
 * Results: bench/results/kb-search.json.
 */
import autocannon from 'autocannon';
import { sql } from 'drizzle-orm';
import { HashedEmbedder } from '../src/adapters/embedding/embedder.ts';
import { openDatabase, runMigrations } from '../src/db/database.ts';
import { newDocumentId } from '../src/core/ids.ts';
import { provisionOrganization } from '../src/modules/organizations/service.ts';
import { benchDatabaseUrl, machine, startChild, writeResult } from './lib.ts';

const DOCUMENTS = 200;
const CHUNKS_PER_DOCUMENT = 500;
const databaseUrl = await benchDatabaseUrl();
const database = await openDatabase({ databaseUrl, dataDir: '/tmp', poolSize: 4 });
await runMigrations(database);

// A deterministic vocabulary so runs are comparable.
let seed = 42;
const random = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
const vocabulary = Array.from({ length: 5000 }, (_, i) => `w${i.toString(36)}${'aeiou'[i % 5]}`);
const sentence = (words: number) => Array.from({ length: words }, () => vocabulary[Math.floor(random() ** 2 * vocabulary.length)]).join(' ');

const existing = await database.pool.query("SELECT id FROM organizations WHERE name = 'kb search bench'");
let orgId: string = existing.rows[0]?.id;
const started = performance.now();
if (!orgId) {
  orgId = (await provisionOrganization(database.db, { name: 'kb search bench' })).organization_id;
  const embedder = new HashedEmbedder();
  for (let d = 0; d < DOCUMENTS; d++) {
    const id = newDocumentId();
    await database.db.execute(sql`INSERT INTO documents (id, client_id, name, type, format, size_bytes, processing_status, vector_count)
      VALUES (${id}, ${orgId}, ${`Bench document ${d}`}, 'text', 'txt', 0, 'completed', ${CHUNKS_PER_DOCUMENT})`);
    const texts = Array.from({ length: CHUNKS_PER_DOCUMENT }, () => sentence(120));
    const vectors = texts.map((t) => `[${embedder.embedOne(t).map((v) => v.toFixed(5)).join(',')}]`);
    await database.pool.query(
      `INSERT INTO document_chunks (document_id, chunk_index, client_id, page, text, embedding)
       SELECT $1, i - 1, $2, NULL, t, v::vector FROM unnest($3::text[], $4::text[]) WITH ORDINALITY AS x(t, v, i)`,
      [id, orgId, texts, vectors],
    );
    if (d % 20 === 19) process.stdout.write(`seeded ${(d + 1) * CHUNKS_PER_DOCUMENT} chunks\n`);
  }
}
const seedSeconds = (performance.now() - started) / 1000;
const { rows: [{ n: chunkCount }] } = await database.pool.query('SELECT count(*)::int AS n FROM document_chunks WHERE client_id = $1', [orgId]);
// A fresh admin key for the load (the provisioned one's secret is not stored).
const { issueApiKey } = await import('../src/modules/api-keys/service.ts');
const { rows: [owner] } = await database.pool.query('SELECT user_id FROM memberships WHERE client_id = $1 LIMIT 1', [orgId]);
const apiKey = (await issueApiKey(database.db, orgId, { userId: owner.user_id, name: 'bench', role: 'user' })).key;

const app = await startChild('app', { DATABASE_URL: databaseUrl, IN_PROCESS_WORKER: 'false' });
try {
  const queries = Array.from({ length: 50 }, () => sentence(6));
  let i = 0;
  const result = await autocannon({
    url: `${app.url}/api/knowledge-base/search`,
    method: 'POST',
    connections: 4,
    duration: 10,
    headers: { 'x-api-key': apiKey, 'x-organization-id': orgId, 'content-type': 'application/json' },
    setupClient: (client) => client.setBody(JSON.stringify({ query: queries[i++ % queries.length], top_k: 10 })),
  });
  const out = {
    ...machine(),
    database: 'PostgreSQL 15 + pgvector (HNSW, cosine) on the same 2 cores',
    chunks: chunkCount,
    documents: DOCUMENTS,
    seed_seconds: Number(seedSeconds.toFixed(1)),
    search: {
      connections: 4, requests_per_second: Math.round(result.requests.average),
      latency_ms: { p50: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99 }, non_2xx: result.non2xx, errors: result.errors,
      target_p50_ms: 50,
    },
  };
  console.log(JSON.stringify(out, null, 2));
  console.log(`written to ${writeResult('kb-search', out)}`);
} finally {
  await app.stop();
  await database.close();
}
