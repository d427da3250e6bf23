import type { Mailer } from '../../adapters/mail/mailer.ts';
import type { Db } from '../../db/database.ts';
import type { OrganizationService } from '../organizations/service.ts';
import { InvitationEmailer } from './emailer.ts';
import { INVITATION_EMAIL, invitationJobs } from './jobs.ts';
import type { InvitationService } from './service.ts';

/** What the invitations module adds to the platform (src/registry.ts lists every module). */
export const invitationsModule = {
  name: 'invitations',
  routes: async (s: { invitations: InvitationService }) => (await import('./routes.ts')).invitationRoutes(s.invitations),
  jobs: [INVITATION_EMAIL],
  workers: (s: { database: { db: Db }; adapters: { mailer: () => Promise<Mailer> }; config: { publicBaseUrl: string }; organizations: OrganizationService }) =>
    invitationJobs(new InvitationEmailer({ db: s.database.db, mailer: s.adapters.mailer, publicBaseUrl: s.config.publicBaseUrl, organizations: s.organizations })),
};
