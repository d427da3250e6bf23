import { Type } from 'typebox';
import { defineJob, jobUnit, type JobUnit, type PayloadOf } from '../../jobs/job.ts';

const CampaignRef = Type.Object({ clientId: Type.String({ minLength: 1 }), campaignId: Type.String({ minLength: 1 }) });
const Placement = Type.Object({
  clientId: Type.String({ minLength: 1 }),
  campaignId: Type.String({ minLength: 1 }),
  contactId: Type.Integer({ minimum: 1 }),
  callSid: Type.String({ minLength: 1 }),
});

/**
 * One dial decision for one campaign, re-sent by itself with a delay while the campaign runs. The
 * queue is `stately` with the campaign id as singleton key: at most one tick of a campaign waits, so
 * the chain never multiplies, and the campaign row lock makes ticks on several workers take turns.
 */
export const CAMPAIGN_TICK = defineJob({
  name: 'campaign-tick',
  payload: CampaignRef,
  // A tick takes well under a second: one whose worker died is retried after the job expiry (at most 2 minutes).
  options: (config) => ({ policy: 'stately', retryLimit: 10, retryDelay: 5, expireInSeconds: Math.min(120, config.expireSeconds), retentionSeconds: 3600 }),
});

/** Placements whose retries ran out (a worker that died on the last try included): the attempt ends failed. */
export const CAMPAIGN_PLACE_CALL_DEAD = defineJob({
  name: 'campaign-place-call-dead',
  payload: Placement,
  options: () => ({ retentionSeconds: 14 * 86400 }),
});

/** Places one call the dialer created, through the CallPlacer. */
export const CAMPAIGN_PLACE_CALL = defineJob({
  name: 'campaign-place-call',
  payload: Placement,
  options: (config) => ({
    expireInSeconds: config.expireSeconds, retryLimit: Math.max(1, config.retryLimit), retryDelay: 1, deadLetter: CAMPAIGN_PLACE_CALL_DEAD.name,
  }),
});

/** Every minute: a running campaign whose tick chain was lost (it cannot be, but cheaply proven) gets a tick again. */
export const CAMPAIGN_SWEEP = defineJob({
  name: 'campaign-sweep',
  payload: Type.Object({}),
  options: () => ({ retryLimit: 1, expireInSeconds: 60, retentionSeconds: 3600 }),
  cron: '* * * * *',
});

/** Hourly: the staged contacts of uploads whose process died mid-upload (CampaignService.addContacts). */
export const CAMPAIGN_UPLOAD_CLEANUP = defineJob({
  name: 'campaign-upload-cleanup',
  payload: Type.Object({}),
  options: () => ({ retryLimit: 2, retryDelay: 60, expireInSeconds: 300, retentionSeconds: 3600 }),
  cron: '41 * * * *',
});

export const CAMPAIGN_JOBS = [CAMPAIGN_TICK, CAMPAIGN_PLACE_CALL_DEAD, CAMPAIGN_PLACE_CALL, CAMPAIGN_SWEEP, CAMPAIGN_UPLOAD_CLEANUP] as const;

/** What the jobs drive (CampaignDialer): named here, since the dialer imports this file for the job names. */
export interface CampaignJobRunner {
  tick(orgId: string, campaignId: string): Promise<unknown>;
  place(payload: PayloadOf<typeof CAMPAIGN_PLACE_CALL>): Promise<void>;
  giveUp(payload: PayloadOf<typeof CAMPAIGN_PLACE_CALL_DEAD>): Promise<void>;
  sweep(): Promise<void>;
}

export function campaignJobs(dialer: CampaignJobRunner, uploads: { deleteAbandonedUploads(): Promise<unknown> }): JobUnit[] {
  return [
    jobUnit(CAMPAIGN_TICK, async (payload) => {
      await dialer.tick(payload.clientId, payload.campaignId);
    }),
    jobUnit(CAMPAIGN_PLACE_CALL, (payload) => dialer.place(payload)),
    jobUnit(CAMPAIGN_PLACE_CALL_DEAD, (payload) => dialer.giveUp(payload)),
    jobUnit(CAMPAIGN_SWEEP, () => dialer.sweep()),
    jobUnit(CAMPAIGN_UPLOAD_CLEANUP, async () => {
      await uploads.deleteAbandonedUploads();
    }),
  ];
}
