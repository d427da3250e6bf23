import type { Executor } from '../../db/database.ts';
import type { EventOutbox } from '../../platform/outbox.ts';
import { CampaignRepository, type CampaignRow } from './repository.ts';
import { toCampaignView } from './views.ts';

/**
 * Ends a campaign that has no contact left to call (none pending, retrying or in progress), in the
 * transaction that moved its last contact, with its `campaign.completed` event (extensions.md §1):
 * the campaign row is locked by every caller, so it completes, and emits, once.
 */
export async function completeCampaign(within: Executor, campaign: CampaignRow, outbox: EventOutbox): Promise<CampaignRow> {
  const completed = await new CampaignRepository(within).update(campaign.clientId, campaign.id, { status: 'completed', completedAt: new Date() });
  await outbox.emit(within, completed.clientId, 'campaign.completed', toCampaignView(completed), { agentId: completed.agentId });
  return completed;
}

/** True when nothing is left to call: every contact completed, failed or skipped. */
export function nothingLeft(c: Pick<CampaignRow, 'pending' | 'retrying' | 'inProgress'>): boolean {
  return c.pending + c.retrying + c.inProgress === 0;
}
