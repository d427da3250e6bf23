import type { Services } from '../services.ts';
import { JOB_DEFINITIONS } from './definitions.ts';

/**
 * Registers every job unit on the queue and starts the webhook dispatcher: in the server process by
 * default, or alone in `switchboard worker` processes. Stop them with `services.close()` (or the queue's owner).
 */
export async function startWorkers(services: Pick<Services, 'queue' | 'jobs' | 'webhookDispatcher'>): Promise<void> {
  const defined = new Set(JOB_DEFINITIONS.map((d) => d.name));
  const handled = new Set(services.jobs.map((u) => u.name));
  const unhandled = [...defined].filter((name) => !handled.has(name));
  const undefinedQueues = [...handled].filter((name) => !defined.has(name));
  if (unhandled.length || undefinedQueues.length) {
    throw new Error(`Job units and queue definitions differ: no handler for [${unhandled}], no queue for [${undefinedQueues}]`);
  }
  await services.queue.work(services.jobs);
  services.webhookDispatcher.start();
}
