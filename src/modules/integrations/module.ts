import type { IntegrationService } from './service.ts';

/** What the integrations module adds to the platform (src/registry.ts lists every module). */
export const integrationsModule = {
  name: 'integrations',
  routes: async (s: { integrations: IntegrationService }) => (await import('./routes.ts')).integrationRoutes(s.integrations),
};
