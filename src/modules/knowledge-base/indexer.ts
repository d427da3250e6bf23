import type { Db } from '../../db/database.ts';
import type { Embedder } from '../../adapters/embedding/embedder.ts';
import type { ObjectStore } from '../../adapters/storage/object-store.ts';
import { chunk, countWords, extract, ExtractionError } from './extract.ts';
import type { Format } from './file-types.ts';
import { DocumentRepository } from './repository.ts';
import { toDocument } from './document-view.ts';
import type { EventOutbox } from '../../platform/outbox.ts';
import { transaction } from '../../db/unit-of-work.ts';

/** What an indexing job names: one revision of one document. */
export interface DocumentRevision {
  clientId: string;
  documentId: string;
  revision: number;
}

/**
 * The indexing job: extract → chunk → embed → store. Safe to run twice and to kill at any point:
 * chunks are replaced whole in the same transaction that marks the revision completed, and a job
 * for a deleted or newer revision does nothing. A worker that dies leaves its job to expire and
 * be retried; the dead-letter handler fails what never finished.
 */
export class DocumentIndexer {
  readonly #db: Db;
  readonly #store: ObjectStore;
  readonly #embedder: Embedder;
  readonly #retryLimit: number;
  readonly #outbox: EventOutbox;
  constructor(deps: { db: Db; store: ObjectStore; embedder: Embedder; retryLimit: number; outbox: EventOutbox }) {
    this.#db = deps.db;
    this.#outbox = deps.outbox;
    this.#store = deps.store;
    this.#embedder = deps.embedder;
    this.#retryLimit = deps.retryLimit;
  }

  async index(job: DocumentRevision, retryCount: number): Promise<void> {
    const { clientId, documentId, revision } = job;
    const repo = new DocumentRepository(this.#db);
    const doc = await repo.findById(clientId, documentId);
    if (!doc || doc.revision !== revision || doc.processingStatus === 'completed') return;
    await repo.update(clientId, documentId, { processingStatus: 'processing', lastProcessedAt: new Date() }, revision);
    try {
      const content = doc.type === 'text' ? Buffer.from(doc.text ?? '', 'utf8') : await this.#read(doc.storageKey!);
      const extracted = await extract(doc.format as Format, content);
      const chunks = chunk(extracted);
      const embeddings = await this.#embedder.embed(chunks.map((c) => c.text));
      await transaction(this.#db, async (tx) => {
        const txRepo = new DocumentRepository(tx);
        const current = await txRepo.update(clientId, documentId, {
          processingStatus: 'completed',
          processingError: null,
          pageCount: extracted.pageCount,
          wordCount: countWords(extracted),
          vectorCount: chunks.length,
          lastProcessedAt: new Date(),
        }, revision);
        if (!current) return;
        await txRepo.replaceChunks(clientId, documentId, chunks.map((c, i) => ({ ...c, embedding: embeddings[i]! })));
        await this.#outbox.emit(tx, clientId, 'document.completed', toDocument(current, await txRepo.agentIds(clientId, documentId)));
      });
    } catch (err) {
      const permanent = err instanceof ExtractionError;
      if (permanent || retryCount >= this.#retryLimit) {
        await this.#fail(job, (err as Error).message);
        if (permanent) return;
      }
      throw err; // retried by the queue
    }
  }

  /** Jobs whose retries ran out without a handler recording why (their worker died). */
  async giveUp(job: DocumentRevision): Promise<void> {
    const { clientId, documentId, revision } = job;
    const repo = new DocumentRepository(this.#db);
    const doc = await repo.findById(clientId, documentId);
    if (!doc || doc.revision !== revision || doc.processingStatus === 'completed' || doc.processingStatus === 'failed') return;
    await this.#fail(job, 'Processing did not finish after every retry; reprocess the document to try again');
  }

  /** Marks the revision failed with document.failed in the same transaction (a stale revision changes nothing). */
  async #fail(job: DocumentRevision, error: string): Promise<void> {
    const { clientId, documentId, revision } = job;
    await transaction(this.#db, async (tx) => {
      const repo = new DocumentRepository(tx);
      const failed = await repo.update(clientId, documentId, { processingStatus: 'failed', processingError: error }, revision);
      if (failed) await this.#outbox.emit(tx, clientId, 'document.failed', toDocument(failed, await repo.agentIds(clientId, documentId)));
    });
  }

  async #read(key: string): Promise<Buffer> {
    const parts: Buffer[] = [];
    for await (const part of await this.#store.read(key)) parts.push(part as Buffer);
    return Buffer.concat(parts);
  }
}
