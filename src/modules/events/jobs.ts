import { Type } from 'typebox';
import { defineJob, jobUnit, type JobUnit } from '../../jobs/job.ts';

/**
 * One attempt of one delivery. The retry schedule of the contract is kept by the handler (each
 * failed attempt queues the next with its delay); the queue's own retries only cover a worker that
 * died mid-attempt, whose job expires and runs again (the receiver may then see the event twice,
 * always under the same `webhook-id`).
 */
export const WEBHOOK_DELIVERY = defineJob({
  name: 'webhook-delivery',
  payload: Type.Object({
    clientId: Type.String({ minLength: 1 }),
    deliveryId: Type.String({ minLength: 1 }),
    /** The attempt this job makes (1-based): a job whose attempt was already recorded does nothing. */
    attempt: Type.Integer({ minimum: 1 }),
  }),
  // Expiry outlasts the request (15 s) by a little: a killed worker's attempt is made again soon after.
  options: (config) => ({ expireInSeconds: config.webhookTimeoutSeconds + 5, retryLimit: 10, retryDelay: 1 }),
  concurrency: 8,
});

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
  deliver(job: { clientId: string; deliveryId: string; attempt: number }): Promise<void>;
  mailDisabled(job: { clientId: string; webhookId: string }): Promise<void>;
  cleanup(): Promise<void>;
}

export function eventJobs(handlers: EventJobHandlers): JobUnit[] {
  return [
    jobUnit(WEBHOOK_DELIVERY, (payload) => handlers.deliver(payload)),
    jobUnit(WEBHOOK_DISABLED_EMAIL, (payload) => handlers.mailDisabled(payload)),
    jobUnit(EVENTS_CLEANUP, () => handlers.cleanup()),
  ];
}
