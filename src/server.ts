import { ConfigError, loadConfig } from './config.ts';
import { buildApp } from './app.ts';
import { openDatabase, runMigrations } from './db/database.ts';
import { DataDirLockedError } from './db/lock.ts';
import { buildServices } from './services.ts';
import { startWorkers } from './workers.ts';
import { startMetricsServer } from './core/http/metrics.ts';
import { quietWhenNothingServed, releaseMemoryWhenIdle } from './idle-memory.ts';

/** Process entry: config, database, migrations, services, first-run bootstrap, listen, graceful shutdown. */
async function main(): Promise<void> {
  const config = loadConfig();
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: config.databasePoolSize,
  });
  await runMigrations(database);
  const services = await buildServices(config, database);
  const app = await buildApp(services);
  for (const warning of config.runtime.warnings) app.log.warn(warning);
  if (config.jobs.inProcessWorker) await startWorkers(services);

  if (config.bootstrap) {
    const created = await services.organizations.bootstrapIfEmpty(config.dataDir, config.adminEmail);
    if (created) {
      // Printed once, on the first start only; bootstrap.json keeps the key for the operator.
      const link = await services.sessions.createLink(config.adminEmail);
      process.stdout.write(
        `\nFirst run: created organization "Default" with the admin user ${config.adminEmail}\n` +
          `  Sign in to the console (once, within 15 minutes): ${link}\n` +
          `  X-Organization-Id: ${created.organization_id}\n` +
          `  X-API-Key:         ${created.api_key.key}  (role admin)\n` +
          `  saved to ${config.dataDir}/bootstrap.json (mode 0600)\n\n`,
      );
    }
  }

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) {
      app.log.warn(`${signal} again: exiting now`);
      process.exit(1);
    }
    stopping = true;
    app.log.info(`${signal}: finishing in-flight requests`);
    try {
      // The built-in runtime's calls go on (new streams refused) while the API still serves their reports.
      await app.runtimeCalls?.drain(config.runtime.drainSeconds);
      await app.close(); // stops accepting, waits for in-flight requests
      await services.close(); // lets running jobs finish (others are retried after they expire)
      await database.close();
      process.exit(0);
    } catch (err) {
      app.log.error({ err }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));

  await app.listen({ port: config.port, host: config.host });
  // Start-up's garbage, and what a burst of requests grew the heap to, go back to the system once
  // nothing is served (src/idle-memory.ts).
  const mb = (bytes: number) => Math.round(bytes / 1048576);
  releaseMemoryWhenIdle({
    isQuiet: quietWhenNothingServed(app.server, () => (app.runtimeCalls?.active ?? 0) > 0),
    onRelease: (before, after) => app.log.debug(`memory: ${mb(before)} MB resident → ${mb(after)} MB after a quiet interval`),
  });
  process.stdout.write(`Switchboard console: ${config.publicBaseUrl}/  (API under ${config.publicBaseUrl}/api, reference at /api/docs)\n`);
  if (config.metrics.port !== undefined) {
    await startMetricsServer(services.metrics, { port: config.metrics.port, host: config.host, token: config.metrics.token });
    app.log.info(`metrics: http://${config.host}:${config.metrics.port}/metrics`);
  }
  app.log.info(`database: ${database.kind === 'embedded' ? `embedded PGlite in ${config.dataDir}` : 'PostgreSQL server'}`);
}

main().catch((err) => {
  if (err instanceof ConfigError || err instanceof DataDirLockedError) {
    process.stderr.write(`switchboard: ${err.message}\n`);
  } else {
    process.stderr.write(`switchboard: failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  }
  process.exit(1);
});
