import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import type { Embedder } from '../adapters/embedding/embedder.ts';
import type { ObjectStore } from '../adapters/storage/object-store.ts';
import { DocumentIndexer } from '../modules/knowledge-base/indexer.ts';
import { QUEUES, type IndexDocumentJob, type JobQueue } from './queue.ts';

/**
 * Registers the job handlers on the queue: in the server process by default, or alone in
 * `switchboard worker` processes. Stop them with `queue.stop()`.
 */
export async function startWorkers(deps: { config: Config; database: Database; queue: JobQueue; store: ObjectStore; embedder: Embedder }): Promise<void> {
  const indexer = new DocumentIndexer({ db: deps.database.db, store: deps.store, embedder: deps.embedder, retryLimit: deps.config.jobs.retryLimit });
  await deps.queue.work<IndexDocumentJob>(QUEUES.indexDocument, (job) => indexer.index(job));
  await deps.queue.work<IndexDocumentJob>(QUEUES.indexDocumentDead, (job) => indexer.giveUp(job));
}
