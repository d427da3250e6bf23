import type pg from 'pg';
import { PgBoss, type Job } from 'pg-boss';
import type { JobsConfig } from '../config.ts';

export const QUEUES = {
  /** Extract, chunk, embed and store one document revision. */
  indexDocument: 'kb-index-document',
  /** Index jobs whose retries ran out (including workers that died on the last try). */
  indexDocumentDead: 'kb-index-document-dead',
  /** Send one invitation's email (retried while the mail server refuses). */
  invitationEmail: 'invitation-email',
} as const;

export interface InvitationEmailJob {
  clientId: string;
  inviteId: string;
}

export interface IndexDocumentJob {
  clientId: string;
  documentId: string;
  revision: number;
}

const unref = <T>(timer: T): T => {
  (timer as { unref?: () => void }).unref?.();
  return timer;
};
const BACKGROUND_CLOCK = {
  now: () => Date.now(),
  setTimeout: (fn: () => void, ms: number) => unref(setTimeout(fn, ms)),
  clearTimeout: (handle: unknown) => clearTimeout(handle as NodeJS.Timeout),
  setInterval: (fn: () => void, ms: number) => unref(setInterval(fn, ms)),
  clearInterval: (handle: unknown) => clearInterval(handle as NodeJS.Timeout),
};

/**
 * The pg-boss job queue, in the platform's own database (schema `pgboss`). Jobs are written in
 * the caller's transaction when it passes its client, so a row and its job commit together.
 */
export class JobQueue {
  readonly boss: PgBoss;
  readonly #config: JobsConfig;
  #started: Promise<void> | undefined;

  /** `background`: its timers and idle connections do not keep the process alive (tests, the CLI). */
  constructor(connection: pg.PoolConfig, config: JobsConfig, options: { background?: boolean } = {}) {
    this.#config = config;
    this.boss = new PgBoss({
      ...(connection as Record<string, unknown>),
      ...(options.background ? { clock: BACKGROUND_CLOCK, idleTimeoutMillis: 300 } : {}),
      max: 3,
      schema: 'pgboss',
      supervise: true,
      schedule: false,
      superviseIntervalSeconds: config.superviseSeconds,
      monitorIntervalSeconds: config.superviseSeconds,
    });
    this.boss.on('error', (e) => { if (process.env.DEBUG_JOBS) console.error('pg-boss:', e.message); }); // surfaced through failed jobs; an idle connection error must not crash the process
  }

  start(): Promise<void> {
    this.#started ??= (async () => {
      await this.boss.start();
      await this.boss.createQueue(QUEUES.indexDocumentDead, { retentionSeconds: 14 * 86400 });
      await this.boss.createQueue(QUEUES.indexDocument, {
        expireInSeconds: this.#config.expireSeconds,
        retryLimit: this.#config.retryLimit,
        retryDelay: 1,
        retryBackoff: true,
        deadLetter: QUEUES.indexDocumentDead,
      });
      await this.boss.createQueue(QUEUES.invitationEmail, {
        expireInSeconds: 120, retryLimit: Math.max(this.#config.retryLimit, 5), retryDelay: 5, retryBackoff: true,
      });
      // Warm pg-boss's queue cache now: a cold lookup inside a caller's transaction would need a
      // second connection, which the single-session embedded database cannot give while that
      // transaction is open.
      for (const queue of Object.values(QUEUES)) await this.boss.getJobById(queue, '00000000-0000-4000-8000-000000000000');
    })();
    return this.#started;
  }

  /** Queues the job under `id` (a UUID the caller has already stored beside its row). */
  sendIndexJob(id: string, data: IndexDocumentJob, client?: pg.PoolClient): Promise<void> {
    return this.#send(QUEUES.indexDocument, data, { id }, client);
  }

  sendInvitationEmail(data: InvitationEmailJob, client?: pg.PoolClient): Promise<void> {
    return this.#send(QUEUES.invitationEmail, data, {}, client);
  }

  /** With `client`, the job is written in that client's open transaction. */
  async #send(queue: string, data: object, options: { id?: string }, client?: pg.PoolClient): Promise<void> {
    await this.start();
    const sent = await this.boss.send(queue, data, { ...options, ...(client ? { db: { executeSql: (text, values) => client.query(text, values) } } : {}) });
    if (!sent) throw new Error(`The job queue did not accept the ${queue} job`);
  }

  async work<T extends object>(queue: string, handler: (job: Job<T>) => Promise<void>, concurrency = 1): Promise<void> {
    await this.start();
    // Batches of 4 and no pause between full batches: a backlog drains without waiting out the poll interval.
    const options = { pollingIntervalSeconds: this.#config.pollSeconds, localConcurrency: concurrency, batchSize: 4, burstWhenBatchFull: true };
    await this.boss.work<T>(queue, options, async (jobs) => {
      for (const job of jobs) await handler(job);
    });
  }

  async stop(): Promise<void> {
    if (!this.#started) return;
    await this.#started.catch(() => {});
    await this.boss.stop({ graceful: true, timeout: 10_000 });
  }
}
