import type { RuntimeService } from './service.ts';

/** What the voice runtime API module adds to the platform (src/registry.ts lists every module). */
export const runtimeModule = {
  name: 'runtime',
  routes: async (s: { runtime: RuntimeService }) => (await import('./routes.ts')).runtimeRoutes(s.runtime),
};
