import type pg from 'pg';
import { PgBoss } from 'pg-boss';
import type { Static, TSchema } from 'typebox';
import { Value } from 'typebox/value';
import type { JobsConfig } from '../config.ts';
import type { Logger } from '../core/logger.ts';
import { isInTransaction } from '../db/transaction-scope.ts';
import type { JobDefinition, JobUnit, QueueOptions } from './job.ts';

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

export interface JobQueueDeps {
  connection: pg.PoolConfig;
  config: JobsConfig;
  log: Logger;
  /** Every queue, created on start (JOB_DEFINITIONS). */
  definitions: readonly JobDefinition[];
  /** Its timers and idle connections do not keep the process alive (tests, the CLI). */
  background?: boolean;
}

/**
 * The pg-boss job queue, in the platform's own database (schema `pgboss`). It is started once, before
 * the app serves requests; jobs are then written in the caller's transaction when it passes its
 * client, so a row and its job commit together.
 */
export class JobQueue {
  readonly boss: PgBoss;
  readonly #deps: JobQueueDeps;
  #started: Promise<void> | undefined;
  #ready = false;

  constructor(deps: JobQueueDeps) {
    this.#deps = deps;
    this.boss = new PgBoss({
      ...(deps.connection as Record<string, unknown>),
      // Idle connections do not hold the process open either; they stay pooled (pg's 10 s), since
      // closing them sooner than the poll interval made every poll a new PostgreSQL session.
      ...(deps.background ? { clock: BACKGROUND_CLOCK, allowExitOnIdle: true } : {}),
      max: 3,
      schema: 'pgboss',
      supervise: true,
      // Recurring jobs (JobDefinition.cron): every process may run the scheduler; pg-boss files
      // each occurrence under one key, so it is sent once however many processes run.
      schedule: true,
      superviseIntervalSeconds: deps.config.superviseSeconds,
      monitorIntervalSeconds: deps.config.superviseSeconds,
    });
    // An idle connection's error (a database restart) must not crash the process; it is logged.
    this.boss.on('error', (err) => deps.log.error({ err }, 'job queue error'));
  }

  /** Starts pg-boss and creates every queue. Refused inside a transaction (see transaction-scope.ts). */
  start(): Promise<void> {
    if (!this.#started && isInTransaction()) {
      throw new Error('The job queue cannot start inside a database transaction: start it before serving requests');
    }
    this.#started ??= (async () => {
      await this.boss.start();
      for (const definition of this.#deps.definitions) await this.boss.createQueue(definition.name, definition.options(this.#deps.config));
      for (const { name, cron } of this.#deps.definitions) if (cron) await this.boss.schedule(name, cron, {}, { tz: 'UTC' });
      for (const { name } of this.#deps.definitions) await this.#warmCache(name);
      this.#ready = true;
    })();
    return this.#started;
  }

  /**
   * Changes a queue's options (expiry, retries) for the jobs sent from now on: a job takes them from
   * its queue when it is sent, whatever the workers' settings.
   */
  async retune(definition: JobDefinition<TSchema>, options: Partial<QueueOptions>): Promise<void> {
    await this.boss.updateQueue(definition.name, options);
    await this.#warmCache(definition.name); // updateQueue dropped the queue from the cache
  }

  /**
   * Fills pg-boss's cache entry of a queue: a cold lookup inside a caller's transaction would need a
   * second connection, which the single-session embedded database cannot give while that
   * transaction is open.
   */
  async #warmCache(name: string): Promise<void> {
    await this.boss.getJobById(name, '00000000-0000-4000-8000-000000000000');
  }

  /**
   * Queues a job. With `within`, it is written in that client's open transaction. `id` is a UUID the
   * caller may already have stored beside its row. `singletonKey` with a `stately` queue keeps one
   * job per key waiting: a send while one waits is dropped (the result is false) when `dedupe` says
   * that is expected; `startAfter` delays the job (seconds).
   */
  async send<P extends TSchema>(
    definition: JobDefinition<P>, payload: Static<P>,
    options: { id?: string; within?: pg.PoolClient; startAfterSeconds?: number; singletonKey?: string; dedupe?: boolean } = {},
  ): Promise<boolean> {
    if (!this.#ready) throw new Error(`The job queue is not started: cannot send ${definition.name}`);
    if (!Value.Check(definition.payload, payload)) throw new Error(`Invalid ${definition.name} payload`);
    const client = options.within;
    const sent = await this.boss.send(definition.name, payload as object, {
      ...(options.id ? { id: options.id } : {}),
      ...(options.startAfterSeconds ? { startAfter: options.startAfterSeconds } : {}),
      ...(options.singletonKey ? { singletonKey: options.singletonKey } : {}),
      ...(client ? { db: { executeSql: (text: string, values: unknown[]) => client.query(text, values) } } : {}),
    });
    if (!sent && !options.dedupe) throw new Error(`The job queue did not accept the ${definition.name} job`);
    return Boolean(sent);
  }

  /** Registers the workers of these units; a payload that fails its schema is logged and dropped, not retried. */
  async work(units: readonly JobUnit[]): Promise<void> {
    await this.start();
    // Batches of 4 and no pause between full batches: a backlog drains without waiting out the poll interval.
    const options = { pollingIntervalSeconds: this.#deps.config.pollSeconds, localConcurrency: 1, batchSize: 4, burstWhenBatchFull: true };
    for (const unit of units) {
      await this.boss.work<object>(unit.name, { ...options, localConcurrency: unit.concurrency ?? 1 }, async (jobs) => {
        for (const job of jobs) {
          if (!Value.Check(unit.payload, job.data)) {
            this.#deps.log.error({ job_id: job.id, queue: unit.name }, 'job payload does not match its schema: dropped');
            continue;
          }
          await unit.handle(job.data, { id: job.id, retryCount: job.retryCount });
        }
      });
    }
  }

  async stop(): Promise<void> {
    if (!this.#started) return;
    await this.#started.catch(() => {});
    await this.boss.stop({ graceful: true, timeout: 10_000 });
  }
}
