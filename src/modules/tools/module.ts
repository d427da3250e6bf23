import type { ToolService } from './service.ts';

/** What the tools module adds to the platform (src/registry.ts lists every module). */
export const toolsModule = {
  name: 'tools',
  routes: async (s: { tools: ToolService }) => (await import('./routes.ts')).toolRoutes(s.tools),
};
