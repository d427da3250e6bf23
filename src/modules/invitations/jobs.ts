import { Type } from 'typebox';
import { defineJob, jobUnit, type JobUnit } from '../../jobs/job.ts';
import type { InvitationEmailer } from './emailer.ts';

/** Send one invitation's email, retried while the mail server refuses. */
export const INVITATION_EMAIL = defineJob({
  name: 'invitation-email',
  payload: Type.Object({ clientId: Type.String({ minLength: 1 }), inviteId: Type.String({ minLength: 1 }) }),
  options: (config) => ({ expireInSeconds: 120, retryLimit: Math.max(config.retryLimit, 5), retryDelay: 5, retryBackoff: true }),
});

export function invitationJobs(emailer: InvitationEmailer): JobUnit[] {
  return [jobUnit(INVITATION_EMAIL, (payload) => emailer.send(payload))];
}
