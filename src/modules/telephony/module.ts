import type { TelephonyService } from './service.ts';

/** What the telephony module adds to the platform (src/registry.ts lists every module). */
export const telephonyModule = {
  name: 'telephony',
  routes: async (s: { telephony: TelephonyService }) => (await import('./routes.ts')).telephonyRoutes(s.telephony),
};
