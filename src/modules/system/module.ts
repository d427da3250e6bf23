import type { SystemService } from './service.ts';

/** What the system module adds to the platform (src/registry.ts lists every module). */
export const systemModule = {
  name: 'system',
  routes: async (s: { system: SystemService }) => (await import('./routes.ts')).systemRoutes(s.system),
};
