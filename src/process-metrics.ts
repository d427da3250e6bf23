import type { Database } from './db/database.ts';
import { countDueDeliveries } from './modules/events/repository.ts';
import type { JobQueue } from './jobs/queue.ts';
import { Metrics } from './core/metrics.ts';

/**
 * The metrics of a process that serves requests or works jobs: the HTTP histogram and webhook
 * counter fed as things happen, plus the database pool, the job queues and the due webhook deliveries
 * read at scrape time (the counts come from the shared database, so any process shows the whole backlog).
 */
export function createProcessMetrics(database: Pick<Database, 'pool' | 'db'>, queue: JobQueue, now: () => Date = () => new Date()): Metrics {
  const metrics = new Metrics();
  const { pool } = database;
  metrics.gauge('switchboard_db_pool_connections', 'Connections of the database pool: total, idle, and requests waiting for one', ['state'], () => [
    { labels: { state: 'total' }, value: pool.totalCount },
    { labels: { state: 'idle' }, value: pool.idleCount },
    { labels: { state: 'waiting' }, value: pool.waitingCount },
  ]);
  metrics.gauge('switchboard_jobs', 'Jobs per queue and state: ready to run, active, deferred (scheduled later), failed (kept for the retention period)', ['queue', 'state'], async () => {
    const queues = await queue.boss.getQueues();
    return queues.flatMap((q) => ([
      ['ready', q.readyCount], ['active', q.activeCount], ['deferred', q.deferredCount], ['failed', q.failedCount],
    ] as const).map(([state, value]) => ({ labels: { queue: q.name, state }, value })));
  });
  metrics.gauge('switchboard_webhook_deliveries_due', 'Webhook deliveries due now and not yet claimed by a dispatcher (every organization\'s)', [], async () => [
    { labels: {}, value: await countDueDeliveries(database.db, now()) },
  ]);
  return metrics;
}
