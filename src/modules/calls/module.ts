import type { CallDialer, CallService } from './service.ts';

/** What the calls module adds to the platform (src/registry.ts lists every module). */
export const callsModule = {
  name: 'calls',
  routes: async (s: { calls: CallService }) => (await import('./routes.ts')).callRoutes(s.calls),
};

/** POST /api/calls/dial: its own entry, registered after telephony as it always was (the OpenAPI document's order). */
export const dialModule = {
  name: 'dial',
  routes: async (s: { dialing: CallDialer }) => (await import('./dial-routes.ts')).dialRoutes(s.dialing),
};
