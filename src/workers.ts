import type { Config } from './config.ts';
import { openDatabase, runMigrations } from './db/database.ts';
import { buildServices, JOB_DEFINITIONS, type Services } from './services.ts';
import { startMetricsServer } from './core/http/metrics.ts';

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

/**
 * A worker-only process (`switchboard worker`, `npm run worker`): the job workers without the HTTP
 * server, for scale-out. With the embedded database it goes through the running server's socket.
 * Returns after SIGTERM or SIGINT, once the running jobs have finished.
 */
export async function runWorker(config: Config, out: (line: string) => void): Promise<void> {
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 4, shareRunningServer: true });
  try {
    await runMigrations(database);
    const services = await buildServices(config, database);
    await startWorkers(services);
    // A worker has no HTTP server: METRICS_PORT is how its queue and delivery counts are scraped.
    const metricsServer = config.metrics.port === undefined ? undefined
      : await startMetricsServer(services.metrics, { port: config.metrics.port, host: config.host, token: config.metrics.token });
    out('worker started');
    await new Promise<void>((resolve) => {
      process.once('SIGTERM', resolve);
      process.once('SIGINT', resolve);
    });
    metricsServer?.close();
    await services.close();
  } finally {
    await database.close();
  }
}
