import type { DataSettingsService } from './service.ts';

/** What the data settings module adds to the platform (src/registry.ts lists every module). */
export const dataSettingsModule = {
  name: 'data-settings',
  routes: async (s: { dataSettings: DataSettingsService }) => (await import('./routes.ts')).dataSettingsRoutes(s.dataSettings),
};
