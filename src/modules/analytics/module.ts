import type { AnalyticsService } from './service.ts';

/** What the analytics module adds to the platform (src/registry.ts lists every module). */
export const analyticsModule = {
  name: 'analytics',
  routes: async (s: { analytics: AnalyticsService }) => (await import('./routes.ts')).analyticsRoutes(s.analytics),
};
