import type { LimitsService } from './service.ts';

/** What the limits module adds to the platform (src/registry.ts lists every module). */
export const limitsModule = {
  name: 'limits',
  routes: async (s: { limits: LimitsService }) => (await import('./routes.ts')).limitsRoutes(s.limits),
};
