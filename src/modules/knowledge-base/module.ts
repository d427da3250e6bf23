import type { Embedder } from '../../adapters/embedding/embedder.ts';
import type { ObjectStore } from '../../adapters/storage/object-store.ts';
import type { Db } from '../../db/database.ts';
import type { EventOutbox } from '../../platform/outbox.ts';
import { DocumentIndexer } from './indexer.ts';
import { INDEX_DOCUMENT, INDEX_DOCUMENT_DEAD, knowledgeBaseJobs } from './jobs.ts';
import type { KnowledgeBaseService } from './service.ts';

/** What the knowledge base module adds to the platform (src/registry.ts lists every module). */
export const knowledgeBaseModule = {
  name: 'knowledge-base',
  routes: async (s: { knowledgeBase: KnowledgeBaseService; config: { dataDir: string } }) =>
    (await import('./routes.ts')).knowledgeBaseRoutes(s.knowledgeBase, s.config.dataDir),
  // The dead-letter queue first: a queue is created after the one it names.
  jobs: [INDEX_DOCUMENT_DEAD, INDEX_DOCUMENT],
  workers: (s: {
    database: { db: Db }; adapters: { store: ObjectStore; embedder: Embedder }; config: { jobs: { retryLimit: number } }; outbox: EventOutbox;
  }) => knowledgeBaseJobs(new DocumentIndexer({
    db: s.database.db, store: s.adapters.store, embedder: s.adapters.embedder, retryLimit: s.config.jobs.retryLimit, outbox: s.outbox,
  })),
};
