import { Type } from 'typebox';
import { defineJob, jobUnit, type JobUnit } from '../../jobs/job.ts';
import type { CallAnalysisService } from './analysis.ts';

/**
 * One analysis run (extensions.md §13). A provider's failure is retried after 2, 4, 8... seconds;
 * a run whose worker died is taken again after its expiry. Two at a time per process: each mostly
 * waits on the model.
 */
export const CALL_ANALYSIS = defineJob({
  name: 'call-analysis',
  payload: Type.Object({ clientId: Type.String(), runId: Type.String() }),
  options: (config) => ({ retryLimit: config.retryLimit, retryDelay: 2, retryBackoff: true, expireInSeconds: Math.max(config.expireSeconds, 300) }),
  concurrency: 2,
});

/** A bulk rerun: gathers the matching calls into runs. */
export const CALL_ANALYSIS_BATCH = defineJob({
  name: 'call-analysis-batch',
  payload: Type.Object({ clientId: Type.String(), batchId: Type.String() }),
  options: (config) => ({ retryLimit: config.retryLimit, retryDelay: 10, expireInSeconds: 3600 }),
});

export function callAnalysisJobs(service: CallAnalysisService): JobUnit[] {
  return [
    jobUnit(CALL_ANALYSIS, (payload, job) => service.run(payload, job)),
    jobUnit(CALL_ANALYSIS_BATCH, (payload) => service.runBatch(payload)),
  ];
}
