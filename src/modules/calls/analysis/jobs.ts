import { Type } from 'typebox';
import { defineJob, jobUnit, type JobInfo, type JobUnit, type PayloadOf } from '../../../jobs/job.ts';

/**
 * One analysis run (extensions.md §13). A provider's failure is retried after 2, 4, 8... seconds;
 * a run whose worker died is taken again after JOB_EXPIRE_SECONDS. An attempt slower than that may
 * run beside its retry: the run's lock lets one store and charge. Two at a time per process: each
 * mostly waits on the model.
 */
export const CALL_ANALYSIS = defineJob({
  name: 'call-analysis',
  payload: Type.Object({ clientId: Type.String(), runId: Type.String() }),
  options: (config) => ({ retryLimit: config.retryLimit, retryDelay: 2, retryBackoff: true, expireInSeconds: config.expireSeconds }),
  concurrency: 2,
});

/** A bulk rerun: gathers the matching calls into runs (a retry adds only the missing ones). */
export const CALL_ANALYSIS_BATCH = defineJob({
  name: 'call-analysis-batch',
  payload: Type.Object({ clientId: Type.String(), batchId: Type.String() }),
  options: (config) => ({ retryLimit: config.retryLimit, retryDelay: 2, expireInSeconds: config.expireSeconds }),
});

/** What the jobs drive (CallAnalysisService): named here, since the service imports this file for the job names. */
export interface AnalysisRunner {
  run(payload: PayloadOf<typeof CALL_ANALYSIS>, job: JobInfo): Promise<void>;
  runBatch(payload: PayloadOf<typeof CALL_ANALYSIS_BATCH>): Promise<void>;
}

export function callAnalysisJobs(service: AnalysisRunner): JobUnit[] {
  return [
    jobUnit(CALL_ANALYSIS, (payload, job) => service.run(payload, job)),
    jobUnit(CALL_ANALYSIS_BATCH, (payload) => service.runBatch(payload)),
  ];
}
