import type { MemberService } from './members.ts';
import type { OrganizationService } from './service.ts';

/** What the organizations module adds to the platform (src/registry.ts lists every module). */
export const organizationsModule = {
  name: 'organizations',
  routes: async (s: { organizations: OrganizationService; members: MemberService }) =>
    (await import('./routes.ts')).organizationRoutes(s.organizations, s.members),
};
