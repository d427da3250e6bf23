import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import type { Embedder } from '../adapters/embedding/embedder.ts';
import type { ObjectStore } from '../adapters/storage/object-store.ts';
import { DocumentIndexer } from '../modules/knowledge-base/indexer.ts';
import { QUEUES, type IndexDocumentJob, type InvitationEmailJob, type JobQueue } from './queue.ts';
import { createMailer } from '../adapters/factories.ts';
import type { Mailer } from '../adapters/mail/mailer.ts';
import { InvitationEmailer } from '../modules/invitations/emailer.ts';

/**
 * Registers the job handlers on the queue: in the server process by default, or alone in
 * `switchboard worker` processes. Stop them with `queue.stop()`.
 */
export async function startWorkers(deps: {
  config: Config; database: Database; queue: JobQueue; store: ObjectStore; embedder: Embedder; mailer?: Mailer; log?: { info(obj: object, message: string): void };
}): Promise<void> {
  const indexer = new DocumentIndexer({ db: deps.database.db, store: deps.store, embedder: deps.embedder, retryLimit: deps.config.jobs.retryLimit });
  await deps.queue.work<IndexDocumentJob>(QUEUES.indexDocument, (job) => indexer.index(job));
  await deps.queue.work<IndexDocumentJob>(QUEUES.indexDocumentDead, (job) => indexer.giveUp(job));
  const mailer = deps.mailer ?? createMailer(deps.config, deps.database.db, deps.log);
  const emailer = new InvitationEmailer(deps.database.db, mailer, deps.config.publicBaseUrl);
  await deps.queue.work<InvitationEmailJob>(QUEUES.invitationEmail, (job) => emailer.send(job.data));
}
