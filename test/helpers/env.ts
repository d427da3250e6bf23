import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import { openDatabase, openMemoryDatabase, runMigrations, type Database } from '../../src/db/database.ts';
import { JobQueue } from '../../src/jobs/queue.ts';
import { startWorkers } from '../../src/workers.ts';
import type { Adapters } from '../../src/adapters/factories.ts';
import { buildServices, type Services } from '../../src/services.ts';
import { checkAnswersAgainstDocument } from './contract.ts';

/**
 * One database and one app per test run (the runner uses --test-isolation=none, so every file
 * shares this module). The embedded database costs seconds to create; tests isolate themselves
 * by creating their own organizations instead. DATABASE_URL selects a PostgreSQL server.
 */
export interface TestEnv {
  app: FastifyInstance;
  database: Database;
  config: Config;
  jwtSecret: string;
  tmpDir: string;
  /** The queue the app sends to and the in-process workers take from. */
  queue: JobQueue;
  /** The services the shared app runs on. */
  services: Services;
}

export const TEST_JWT_SECRET = 'test-secret-for-the-embedded-issuer-0123456789';
export const TEST_ENCRYPTION_KEY = Buffer.alloc(32, 42);

let pending: Promise<TestEnv> | undefined;

/**
 * The clock of event and webhook services: real time plus an offset a test may move (the 5-day
 * rule of failing endpoints) and must put back.
 */
export const testClock = { offsetMs: 0, now: (): Date => new Date(Date.now() + testClock.offsetMs) };
// pg's default. (It was 300 ms: on PostgreSQL every request after a pause of a browser test then
// opened a new session, a fork and a cold catalog cache each. --test-force-exit ends the run.)
const IDLE_MS = 10_000;

export function testConfig(tmpDir: string, overrides: Record<string, string> = {}): Config {
  return loadConfig({
    DATA_DIR: path.join(tmpDir, 'data'),
    JWT_SECRET: TEST_JWT_SECRET,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    BOOTSTRAP: 'false',
    PUBLIC_BASE_URL: 'http://127.0.0.1:3000',
    // Short job expiry so a killed worker's job is retried within a test's patience.
    JOB_EXPIRE_SECONDS: '4',
    JOB_SUPERVISE_SECONDS: '1',
    JOB_RETRY_LIMIT: '2',
    ENCRYPTION_KEY: TEST_ENCRYPTION_KEY.toString('base64'),
    // The suite sends thousands of requests from one address; test/rate-limit.test.ts sets its own limits.
    RATE_LIMIT_PER_MINUTE: '100000000', RATE_LIMIT_PUBLIC_PER_MINUTE: '100000000',
    // Webhook receivers of the tests listen on 127.0.0.2 (allowed); 127.0.0.1 stays refused like any
    // loopback address. Retries after 1 s and a 2 s timeout instead of the contract's minutes and 15 s.
    ALLOWED_NETWORKS: '127.0.0.2/32', WEBHOOK_TIMEOUT_SECONDS: '2', WEBHOOK_RETRY_DELAYS_SECONDS: '1,1,1,1,1,1,1',
    ...overrides,
  });
}

async function create(): Promise<TestEnv> {
  const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sbt-'));
  const config = testConfig(tmpDir);
  const database = process.env.DATABASE_URL
    ? await openDatabase({ databaseUrl: process.env.DATABASE_URL, dataDir: config.dataDir, poolSize: 10, idleTimeoutMs: IDLE_MS })
    : await openMemoryDatabase(tmpDir, 10, IDLE_MS);
  await runMigrations(database);
  const services = await buildServices(config, database, { background: true, now: testClock.now });
  const app = await buildApp(services, { instrument: checkAnswersAgainstDocument });
  await startWorkers(services);
  return { app, database, config, jwtSecret: TEST_JWT_SECRET, tmpDir, queue: services.queue, services };
}

/**
 * Another app on the shared database and queue, for tests that need other settings (a provider
 * stand-in, S3, a JWKS) or adapters of their own. Close it with `app.close()`.
 */
export async function buildTestApp(config: Config, adapters: Partial<Adapters> = {}): Promise<FastifyInstance> {
  const env = await testEnv();
  const services = await buildServices(config, env.database, { queue: env.queue, adapters, log: env.services.log, now: testClock.now });
  return buildApp(services, { closeServices: true, instrument: checkAnswersAgainstDocument });
}

export function testEnv(): Promise<TestEnv> {
  pending ??= create();
  return pending;
}

/** Called once by the global teardown. */
export async function closeTestEnv(): Promise<void> {
  if (!pending) return;
  const env = await pending;
  pending = undefined;
  await env.app.close();
  await env.services.close();
  await env.database.close();
  fs.rmSync(env.tmpDir, { recursive: true, force: true });
}
