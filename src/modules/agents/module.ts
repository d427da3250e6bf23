import type { AgentService } from './service.ts';

/** What the agents module adds to the platform (src/registry.ts lists every module). */
export const agentsModule = {
  name: 'agents',
  routes: async (s: { agents: AgentService }) => (await import('./routes.ts')).agentRoutes(s.agents),
};
