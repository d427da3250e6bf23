import type { SessionService } from './service.ts';

/** What the sign-in and console sessions module adds to the platform (src/registry.ts lists every module). */
export const sessionsModule = {
  name: 'sessions',
  routes: async (s: { sessions: SessionService; config: { publicBaseUrl: string } }) =>
    (await import('./routes.ts')).sessionRoutes(s.sessions, { publicBaseUrl: s.config.publicBaseUrl }),
};
