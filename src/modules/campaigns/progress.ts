import type { Executor } from '../../db/database.ts';
import { CampaignRepository, type CampaignRow } from './repository.ts';

/**
 * Ends a campaign that has no contact left to call (none pending, retrying or in progress), in the
 * transaction that moved its last contact. The `campaign.completed` event (extensions.md §1) joins
 * this transaction once the event outbox exists.
 */
export async function completeCampaign(within: Executor, campaign: CampaignRow): Promise<CampaignRow> {
  return new CampaignRepository(within).update(campaign.clientId, campaign.id, { status: 'completed', completedAt: new Date() });
}

/** True when nothing is left to call: every contact completed, failed or skipped. */
export function nothingLeft(c: Pick<CampaignRow, 'pending' | 'retrying' | 'inProgress'>): boolean {
  return c.pending + c.retrying + c.inProgress === 0;
}
