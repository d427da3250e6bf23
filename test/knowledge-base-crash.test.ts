import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { describe, test } from 'node:test';
import { HashedEmbedder } from '../src/adapters/embedding/embedder.ts';
import { INDEX_DOCUMENT } from '../src/modules/knowledge-base/jobs.ts';
import { exited, settledJob, spawnWorker, workerDatabaseUrl } from './helpers/workers.ts';
import { testEnv } from './helpers/env.ts';
import { createOrg } from './helpers/fixtures.ts';
import { createTextDocument, search, waitForProcessing } from './helpers/documents.ts';

/** An OpenAI-compatible embeddings stand-in whose first request never gets an answer. */
async function startEmbeddingsStandIn() {
  const embedder = new HashedEmbedder();
  let requests = 0;
  let firstArrived: () => void;
  const arrived = new Promise<void>((r) => (firstArrived = r));
  const server = http.createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    requests++;
    if (requests === 1) return firstArrived(); // hangs: the worker is now mid-document
    const { input } = JSON.parse(body) as { input: string[] };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ data: input.map((text, index) => ({ index, embedding: embedder.embedOne(text) })) }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    arrived,
    get requests() { return requests; },
    close: () => { server.closeAllConnections(); return new Promise((r) => server.close(r)); },
  };
}

/**
 * The dead worker's job expires after 6 s, with retries to spare: on a loaded machine (three shards
 * on two cores, every query of the second worker through the embedded database's one session) its
 * attempt once outlived a 4 s expiry twice and the document failed with its retries used up. What
 * is tested is the retry after the kill, not the attempt's speed.
 */
const SPARE = { expireInSeconds: 6, retryLimit: 4 };

describe('knowledge base: a worker killed mid-document', () => {
  test('the job expires, is retried by another worker, and the document completes exactly once', async () => {
    const env = await testEnv();
    const { database, queue, tmpDir } = env;
    const embeddings = await startEmbeddingsStandIn();
    const databaseUrl = workerDatabaseUrl(database);
    const workerEnv = {
      DATABASE_URL: databaseUrl, DATA_DIR: path.join(tmpDir, 'worker'), LOG_LEVEL: 'silent', EMBEDDER: 'openai', EMBEDDER_URL: embeddings.url,
      JOB_EXPIRE_SECONDS: String(SPARE.expireInSeconds), JOB_SUPERVISE_SECONDS: '1', JOB_RETRY_LIMIT: String(SPARE.retryLimit),
    };
    await queue.boss.offWork(INDEX_DOCUMENT.name); // only the child workers index during this test
    // A job carries its queue's expiry and retry limit from when it is sent, by the test's app here,
    // so the workers' settings alone do not change them: the queue is given them for this test.
    await queue.retune(INDEX_DOCUMENT, SPARE);
    const children: ChildProcess[] = [];
    try {
      const org = await createOrg();
      const doc = await createTextDocument(org, 'Crash survivor', 'Lighthouse keepers log the weather twice a day. '.repeat(200));
      children.push(spawnWorker(workerEnv));
      await embeddings.arrived;
      const { rows: [during] } = await database.pool.query('SELECT processing_status FROM documents WHERE id = $1', [doc.documentation_id]);
      assert.equal(during.processing_status, 'processing');
      children[0]!.kill('SIGKILL');
      await exited(children[0]!);

      children.push(spawnWorker(workerEnv));
      const done = await waitForProcessing(org, doc.documentation_id, 60_000);
      assert.equal(done.processing_status, 'completed', done.processing_error);
      const { rows: [chunks] } = await database.pool.query(
        'SELECT count(*)::int AS n, count(DISTINCT chunk_index)::int AS distinct_n FROM document_chunks WHERE document_id = $1', [doc.documentation_id]);
      assert.equal(chunks.n, done.vector_count);
      assert.equal(chunks.distinct_n, chunks.n);
      assert.ok(done.vector_count >= 3, `${done.vector_count} chunks`);
      assert.ok(embeddings.requests >= 2);
      // The document's status can be read before pg-boss marks its job completed (CI once saw 'active').
      const job = await settledJob(queue.boss, INDEX_DOCUMENT.name, doc.message_id, 15_000);
      assert.equal(job?.state, 'completed');
      assert.equal(job?.retryLimit, SPARE.retryLimit, 'the job carried the spare retries');
      assert.ok((job?.retryCount ?? 0) >= 1, 'the job was retried after its worker died');
      assert.equal((await search(org, 'lighthouse keepers weather')).json().data[0].documentation_id, doc.documentation_id);
    } finally {
      for (const child of children) child.kill('SIGTERM');
      await Promise.all(children.map(exited));
      await embeddings.close();
      await queue.retune(INDEX_DOCUMENT, INDEX_DOCUMENT.options(env.config.jobs));
      await queue.work(env.services.jobs.filter((unit) => unit.name === INDEX_DOCUMENT.name)); // the shared workers index again
    }
  });
});
