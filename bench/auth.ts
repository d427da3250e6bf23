/**
 * Benchmark: what API-key authentication costs per request.
 * Runs the real app on PostgreSQL (seeded directly: 100 organizations × 20 keys) against a bare
 * Fastify route returning the very same bytes, in the same run, with autocannon.
 * Usage: npm run bench -- auth   (DATABASE_URL optional; default: local server, database switchboard_bench)
 */
import { performance } from 'node:perf_hooks';
import { openDatabase, runMigrations } from '../src/db/database.ts';
import { Authenticator } from '../src/core/auth/authenticator.ts';
import { TokenVerifier } from '../src/core/auth/tokens.ts';
import { ApiKeyCredentials } from '../src/modules/api-keys/credential-queries.ts';
import { UserAccounts } from '../src/modules/organizations/user-accounts.ts';
import { loadConfig } from '../src/config.ts';
import { provisionOrganization } from '../src/modules/organizations/service.ts';
import { issueApiKey } from '../src/modules/api-keys/service.ts';
import { benchDatabaseUrl, load, machine, startChild, writeResult } from './lib.ts';

const databaseUrl = await benchDatabaseUrl();
const database = await openDatabase({ databaseUrl, dataDir: '/tmp', poolSize: 10 });
await runMigrations(database);

// Seed directly: 100 organizations with 20 keys each (the table the auth lookup searches).
const { rows: [{ n }] } = await database.pool.query('SELECT count(*)::int AS n FROM api_keys');
if (n < 2000) {
  for (let o = 0; o < 100; o++) {
    const org = await provisionOrganization(database.db, { name: `bench ${o}` });
    for (let k = 0; k < 19; k++) await issueApiKey(database.db, org.organization_id, { userId: org.user_id, name: `k${k}`, role: 'user' });
  }
}
const target = await provisionOrganization(database.db, { name: 'bench target' });
for (let k = 0; k < 9; k++) await issueApiKey(database.db, target.organization_id, { userId: target.user_id, name: `t${k}`, role: 'user' });
const headers = { 'x-api-key': target.api_key.key, 'x-organization-id': target.organization_id };

// 1. The authenticator alone, in this process: one lookup after another, then 50 at a time.
const config = loadConfig({ DATABASE_URL: databaseUrl, JWT_SECRET: 'bench-secret-0123456789-0123456789' });
const authenticator = new Authenticator({
  keys: new ApiKeyCredentials({ database }), users: new UserAccounts({ db: database.db }), tokens: new TokenVerifier(config.jwt, config.jwt.secret),
});
const credentials = { apiKey: target.api_key.key, authorization: undefined };
for (let i = 0; i < 2000; i++) await authenticator.context(await authenticator.principal(credentials, 'r'), target.organization_id);
const sequentialN = 20_000;
let started = performance.now();
for (let i = 0; i < sequentialN; i++) await authenticator.context(await authenticator.principal(credentials, 'r'), target.organization_id);
const sequentialMs = (performance.now() - started) / sequentialN;
const concurrentN = 50_000;
const cpuBefore = process.cpuUsage();
started = performance.now();
let done = 0;
await Promise.all(Array.from({ length: 50 }, async () => {
  while (done < concurrentN) { done++; await authenticator.context(await authenticator.principal(credentials, 'r'), target.organization_id); }
}));
const concurrentWall = performance.now() - started;
const cpu = process.cpuUsage(cpuBefore);
const authOnly = {
  sequential_latency_ms: Number(sequentialMs.toFixed(4)),
  concurrent_lookups_per_second: Math.round(concurrentN / (concurrentWall / 1000)),
  node_cpu_ms_per_auth: Number(((cpu.user + cpu.system) / 1000 / concurrentN).toFixed(4)),
};
await database.close();

// 2. Over HTTP: the real app against a bare route serving identical bytes.
const env = { DATABASE_URL: databaseUrl };
const app = await startChild('app', env);
const results = [];
try {
  for (const path of ['/api/api-keys', '/api/auth/me']) {
    const body = await (await fetch(`${app.url}${path}`, { headers })).text();
    const bare = await startChild('bare', { BENCH_BODY: body });
    try {
      const bareRun = await load(`bare ${path}`, `${bare.url}${path}`, {});
      const appRun = await load(`app ${path}`, `${app.url}${path}`, headers);
      results.push({
        path,
        bytes: Buffer.byteLength(body),
        bare: bareRun,
        app: appRun,
        throughput_ratio: Number((appRun.requests_per_second / bareRun.requests_per_second).toFixed(3)),
        added_ms_per_request: Number((1000 / appRun.requests_per_second - 1000 / bareRun.requests_per_second).toFixed(4)),
      });
    } finally {
      await bare.stop();
    }
  }
} finally {
  await app.stop();
}

const file = writeResult('auth', { benchmark: 'auth', machine: machine(), database: 'postgresql', auth_only: authOnly, http: results });
console.log(JSON.stringify({ auth_only: authOnly, http: results.map((r) => ({ path: r.path, app_rps: r.app.requests_per_second, bare_rps: r.bare.requests_per_second, ratio: r.throughput_ratio, added_ms: r.added_ms_per_request })) }, null, 2));
console.log(`written to ${file}`);
