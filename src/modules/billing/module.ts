import type { BillingService } from './service.ts';

/** What the billing module adds to the platform (src/registry.ts lists every module). */
export const billingModule = {
  name: 'billing',
  routes: async (s: { billing: BillingService; config: { payments: { successUrl: string; cancelUrl: string }; publicBaseUrl: string } }) =>
    (await import('./routes.ts')).billingRoutes(s.billing, { ...s.config.payments, publicBaseUrl: s.config.publicBaseUrl }),
};
