import { Type } from 'typebox';
import { defineJob, jobUnit, type JobUnit, type PayloadOf } from '../../jobs/job.ts';

/** Send one invitation's email, retried while the mail server refuses. */
export const INVITATION_EMAIL = defineJob({
  name: 'invitation-email',
  payload: Type.Object({ clientId: Type.String({ minLength: 1 }), inviteId: Type.String({ minLength: 1 }) }),
  options: (config) => ({ expireInSeconds: 120, retryLimit: Math.max(config.retryLimit, 5), retryDelay: 5, retryBackoff: true }),
});

/** What the job drives (InvitationEmailer): named here, since the invitation service imports this file for the job. */
export interface InvitationSender {
  send(payload: PayloadOf<typeof INVITATION_EMAIL>): Promise<void>;
}

export function invitationJobs(emailer: InvitationSender): JobUnit[] {
  return [jobUnit(INVITATION_EMAIL, (payload) => emailer.send(payload))];
}
