/** What the console module adds to the platform: the built web console (src/registry.ts lists every module). */
export const consoleModule = {
  name: 'console',
  routes: async () => (await import('./routes.ts')).consoleRoutes(),
};
