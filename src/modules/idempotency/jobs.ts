import { Type } from 'typebox';
import { defineJob, jobUnit, type JobUnit } from '../../jobs/job.ts';
import type { IdempotencyService } from './service.ts';

/** Deletes idempotency keys past their 24 hours; scheduled hourly (an expired key is already free to reuse). */
export const IDEMPOTENCY_CLEANUP = defineJob({
  name: 'idempotency-cleanup',
  payload: Type.Object({}),
  options: () => ({ expireInSeconds: 300, retryLimit: 2, retryDelay: 60 }),
  cron: '17 * * * *',
});

export function idempotencyJobs(service: IdempotencyService, log: { info(obj: object, message: string): void }): JobUnit[] {
  return [jobUnit(IDEMPOTENCY_CLEANUP, async () => {
    const deleted = await service.deleteExpired();
    if (deleted > 0) log.info({ deleted }, 'expired idempotency keys deleted');
  })];
}
