import type { Static, TSchema } from 'typebox';
import type { JobsConfig } from '../config.ts';

/** pg-boss queue options a job sets (see pg-boss's createQueue). */
export interface QueueOptions {
  expireInSeconds?: number;
  retryLimit?: number;
  retryDelay?: number;
  retryBackoff?: boolean;
  retentionSeconds?: number;
  /** The queue that receives jobs whose retries ran out (created before this one). */
  deadLetter?: string;
  /** pg-boss's queue policy; `stately`: at most one job of a singleton key waiting and one running. */
  policy?: 'standard' | 'stately';
}

/** A queue: its name, its options (from the operator's job settings) and the shape of its payload. */
export interface JobDefinition<P extends TSchema = TSchema> {
  name: string;
  payload: P;
  options(config: JobsConfig): QueueOptions;
  /**
   * A recurring job (housekeeping: cleanups, retention): a cron expression in UTC. pg-boss's
   * scheduler sends one job per occurrence, once across every process sharing the database.
   */
  cron?: string;
  /** Jobs a process works at once (default 1): deliveries wait on slow servers, so they run side by side. */
  concurrency?: number;
}

/** What a handler learns of the job besides its payload. */
export interface JobInfo {
  id: string;
  /** 0 on the first attempt, then 1, 2... (a worker that died counts as an attempt). */
  retryCount: number;
}

/** A job with its handler: the unit the workers register. A thrown error retries the job. */
export interface JobUnit<P extends TSchema = TSchema> extends JobDefinition<P> {
  handle(payload: Static<P>, job: JobInfo): Promise<void>;
}

/** The payload a job definition carries. */
export type PayloadOf<D> = D extends JobDefinition<infer P> ? Static<P> : never;

export function defineJob<P extends TSchema>(definition: JobDefinition<P>): JobDefinition<P> {
  return definition;
}

/** Binds a handler to a definition; the payload is checked against the schema before it runs. */
export function jobUnit<P extends TSchema>(definition: JobDefinition<P>, handle: (payload: Static<P>, job: JobInfo) => Promise<void>): JobUnit<P> {
  return { ...definition, handle };
}
