import { EVENTS_CLEANUP, eventJobs, WEBHOOK_DISABLED_EMAIL } from './jobs.ts';
import type { EventService } from './service.ts';
import type { WebhookService } from './webhook-service.ts';

/** What the events and webhooks module adds to the platform (src/registry.ts lists every module). */
export const eventsModule = {
  name: 'events',
  routes: async (s: { events: EventService; webhooks: WebhookService }) => (await import('./routes.ts')).eventRoutes(s.events, s.webhooks),
  jobs: [WEBHOOK_DISABLED_EMAIL, EVENTS_CLEANUP],
  workers: (s: { events: EventService }) => eventJobs({
    mailDisabled: (job) => s.events.mailDisabled(job),
    cleanup: async () => { await s.events.cleanup(); },
  }),
};
