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
}

/** A queue: its name, its options (from the operator's job settings) and the shape of its payload. */
export interface JobDefinition<P extends TSchema = TSchema> {
  name: string;
  payload: P;
  options(config: JobsConfig): QueueOptions;
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

export function defineJob<P extends TSchema>(definition: JobDefinition<P>): JobDefinition<P> {
  return definition;
}

/** Binds a handler to a definition; the payload is checked against the schema before it runs. */
export function jobUnit<P extends TSchema>(definition: JobDefinition<P>, handle: (payload: Static<P>, job: JobInfo) => Promise<void>): JobUnit<P> {
  return { ...definition, handle };
}
