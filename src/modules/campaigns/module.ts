import type { CampaignDialer } from './dialer.ts';
import { CAMPAIGN_JOBS, campaignJobs } from './jobs.ts';
import type { CampaignService } from './service.ts';

/** What the campaigns module adds to the platform (src/registry.ts lists every module). */
export const campaignsModule = {
  name: 'campaigns',
  routes: async (s: { campaigns: CampaignService }) => (await import('./routes.ts')).campaignRoutes(s.campaigns),
  jobs: CAMPAIGN_JOBS,
  workers: (s: { dialer: CampaignDialer; campaigns: CampaignService }) => campaignJobs(s.dialer, s.campaigns),
};
