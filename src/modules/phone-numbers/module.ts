import type { PhoneNumberService } from './service.ts';

/** What the phone numbers module adds to the platform (src/registry.ts lists every module). */
export const phoneNumbersModule = {
  name: 'phone-numbers',
  routes: async (s: { phoneNumbers: PhoneNumberService }) => (await import('./routes.ts')).phoneNumberRoutes(s.phoneNumbers),
};
