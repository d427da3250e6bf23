import type { Logger } from '../../core/logger.ts';
import { IDEMPOTENCY_CLEANUP, idempotencyJobs } from './jobs.ts';
import type { IdempotencyService } from './service.ts';

/** What idempotency adds to the platform besides its request hook: the cleanup of expired keys (src/registry.ts lists every module). */
export const idempotencyModule = {
  name: 'idempotency',
  jobs: [IDEMPOTENCY_CLEANUP],
  workers: (s: { idempotency: IdempotencyService; log: Logger }) => idempotencyJobs(s.idempotency, s.log),
};
