import { Type } from 'typebox';
import { defineJob, jobUnit, type JobUnit } from '../../jobs/job.ts';
import type { AuditService } from './service.ts';

/** Daily: entries are kept 365 days (extensions.md §6). */
export const AUDIT_CLEANUP = defineJob({
  name: 'audit-cleanup',
  payload: Type.Object({}),
  options: () => ({ retryLimit: 3, retryDelay: 300, expireInSeconds: 3600 }),
  cron: '41 2 * * *',
});

export function auditJobs(audit: AuditService, now: () => Date = () => new Date()): JobUnit[] {
  return [jobUnit(AUDIT_CLEANUP, async () => {
    await audit.removeExpired(now());
  })];
}
