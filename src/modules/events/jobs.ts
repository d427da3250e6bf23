import { Type } from 'typebox';
import { defineJob, jobUnit, type JobUnit } from '../../jobs/job.ts';

/** Tells an organization's admins that an endpoint was disabled after 5 days of failures. */
export const WEBHOOK_DISABLED_EMAIL = defineJob({
  name: 'webhook-disabled-email',
  payload: Type.Object({ clientId: Type.String({ minLength: 1 }), webhookId: Type.String({ minLength: 1 }) }),
  options: (config) => ({ expireInSeconds: 120, retryLimit: Math.max(config.retryLimit, 5), retryDelay: 5, retryBackoff: true }),
});

/** Events are kept 30 days (their deliveries go with them). */
export const EVENTS_CLEANUP = defineJob({
  name: 'events-cleanup',
  payload: Type.Object({}),
  options: () => ({ expireInSeconds: 600, retryLimit: 2 }),
  cron: '17 * * * *',
});

export interface EventJobHandlers {
  mailDisabled(job: { clientId: string; webhookId: string }): Promise<void>;
  cleanup(): Promise<void>;
}

export function eventJobs(handlers: EventJobHandlers): JobUnit[] {
  return [
    jobUnit(WEBHOOK_DISABLED_EMAIL, (payload) => handlers.mailDisabled(payload)),
    jobUnit(EVENTS_CLEANUP, () => handlers.cleanup()),
  ];
}
