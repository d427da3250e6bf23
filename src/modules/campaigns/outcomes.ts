import type { Executor } from '../../db/database.ts';
import type { CallEndListener } from '../calls/service.ts';
import type { EventOutbox } from '../../platform/outbox.ts';
import { ContactRepository } from './contacts-repository.ts';
import { completeCampaign, nothingLeft } from './progress.ts';
import { CampaignRepository } from './repository.ts';
import { hasEnded } from './schedule.ts';
import { scheduleOf } from './dialer.ts';

/**
 * Moves a campaign's contact when its call reaches a final status, in the transaction that ends the
 * call (runtime report, carrier status callback or a failed placement: all go through the calls
 * service's final path): `completed`; `retrying` after `delay_minutes` when the outcome is in
 * `retry.on`, attempts remain and the campaign still runs or is paused; otherwise `failed`. The
 * campaign row is locked first (as the dialer does), then the contact, so the two never deadlock.
 */
export class CampaignOutcomes implements CallEndListener {
  readonly #now: () => Date;
  readonly #outbox: EventOutbox;
  constructor(deps: { now: () => Date; outbox: EventOutbox }) {
    this.#now = deps.now;
    this.#outbox = deps.outbox;
  }

  async callEnded(within: Executor, orgId: string, call: { callSid: string; campaignId: string | null; status: string }): Promise<void> {
    if (!call.campaignId) return;
    const campaigns = new CampaignRepository(within);
    const campaign = await campaigns.findById(orgId, call.campaignId, { forUpdate: true });
    if (!campaign) return;
    const contacts = new ContactRepository(within);
    const contact = await contacts.findByCurrentCall(orgId, campaign.id, call.callSid);
    if (!contact) return;
    const now = this.#now();
    const retry = call.status !== 'completed'
      && (campaign.status === 'running' || campaign.status === 'paused')
      && campaign.retryOn.includes(call.status)
      && contact.attempts < campaign.retryMaxAttempts
      && !hasEnded(scheduleOf(campaign), now);
    const status = call.status === 'completed' ? 'completed' : retry ? 'retrying' : 'failed';
    await contacts.update(orgId, contact.id, {
      status, currentCallSid: null, placement: null, lastOutcome: call.status,
      nextAttemptAt: retry ? new Date(now.getTime() + campaign.retryDelayMinutes * 60_000) : null,
    });
    const moved = await campaigns.shift(orgId, campaign.id, { inProgress: -1, [status]: 1 });
    if (moved.status === 'running' && nothingLeft(moved)) await completeCampaign(within, moved, this.#outbox);
  }
}
