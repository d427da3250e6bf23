import { Type } from 'typebox';
import { defineJob, jobUnit, type JobUnit } from '../../jobs/job.ts';
import type { DocumentIndexer } from './indexer.ts';

const DocumentRevision = Type.Object({
  clientId: Type.String({ minLength: 1 }),
  documentId: Type.String({ minLength: 1 }),
  revision: Type.Integer({ minimum: 1 }),
});

/** Index jobs whose retries ran out (including workers that died on the last try): the document is marked failed. */
export const INDEX_DOCUMENT_DEAD = defineJob({
  name: 'kb-index-document-dead',
  payload: DocumentRevision,
  options: () => ({ retentionSeconds: 14 * 86400 }),
});

/** Extract, chunk, embed and store one document revision. */
export const INDEX_DOCUMENT = defineJob({
  name: 'kb-index-document',
  payload: DocumentRevision,
  options: (config) => ({
    expireInSeconds: config.expireSeconds, retryLimit: config.retryLimit, retryDelay: 1, retryBackoff: true, deadLetter: INDEX_DOCUMENT_DEAD.name,
  }),
});

export function knowledgeBaseJobs(indexer: DocumentIndexer): JobUnit[] {
  return [
    jobUnit(INDEX_DOCUMENT, (payload, job) => indexer.index(payload, job.retryCount)),
    jobUnit(INDEX_DOCUMENT_DEAD, (payload) => indexer.giveUp(payload)),
  ];
}
