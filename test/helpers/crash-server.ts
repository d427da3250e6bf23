/**
 * The real server (services and app as src/server.ts builds them) over the test's database, in a
 * process of its own that SIGKILLs itself at one point of the transaction creating an agent:
 * `before-commit` just before its COMMIT is sent, `after-commit` as soon as the COMMIT is answered
 * (before anything else runs: no response sent, nothing kept after it). Any other argument: none.
 * Prints `listening <url>` once it serves. Used by test/idempotency-crash.test.ts.
 */
import os from 'node:os';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { buildApp } from '../../src/app.ts';
import { openDatabase } from '../../src/db/database.ts';
import { buildServices } from '../../src/services.ts';
import { testConfig } from './env.ts';

const point = process.argv[2];
// Over the test's embedded database (its socket), every connection is one session shared with the
// test process, where named prepared statements would collide: send them unnamed, as the app does.
const sharedSession = /[?&]host=/.test(process.env.CRASH_SERVER_DATABASE_URL ?? '');
const original = pg.Client.prototype.query as (...args: unknown[]) => unknown;
const creatingAnAgent = new WeakSet<object>();
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  const first = args[0] as string | { text?: string } | undefined;
  const text = typeof first === 'string' ? first : first?.text ?? '';
  if (sharedSession && typeof first === 'object' && first && 'name' in first) args[0] = { ...first, name: undefined };
  if (/insert into "?agents"? /i.test(text)) creatingAnAgent.add(this);
  if (/^\s*commit\s*;?\s*$/i.test(text) && creatingAnAgent.has(this)) {
    if (point === 'before-commit') process.kill(process.pid, 'SIGKILL');
    if (point === 'after-commit') {
      return (original.apply(this, args) as Promise<unknown>).then(() => process.kill(process.pid, 'SIGKILL'));
    }
  }
  return original.apply(this, args);
} as typeof pg.Client.prototype.query;

const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-crash-'));
const config = testConfig(tmpDir, { DATABASE_URL: process.env.CRASH_SERVER_DATABASE_URL!, LOG_LEVEL: process.env.CRASH_SERVER_LOG_LEVEL ?? 'silent' });
const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 4 });
const services = await buildServices(config, database);
const app = await buildApp(services);
const url = await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(`listening ${url}\n`);
