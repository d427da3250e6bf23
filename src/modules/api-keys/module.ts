import type { ApiKeyService } from './service.ts';

/** What the API keys module adds to the platform (src/registry.ts lists every module). */
export const apiKeysModule = {
  name: 'api-keys',
  routes: async (s: { apiKeys: ApiKeyService }) => (await import('./routes.ts')).apiKeyRoutes(s.apiKeys),
};
