import Fastify from 'fastify';
import { buildApp } from '../src/app.ts';
import { buildServices } from '../src/services.ts';
import { loadConfig } from '../src/config.ts';
import { openDatabase } from '../src/db/database.ts';
import { AgentVersionRepository } from '../src/modules/agents/versions-repository.ts';

/**
 * A benchmark server in its own process: `app` is the real application on the bench database
 * (logging off, as for the bare route, unless BENCH_LOG_LEVEL names the level: `info` is what
 * `npm start` logs, one line per request); `bare` is a Fastify route that returns BENCH_BODY verbatim.
 */
const mode = process.argv[2];
try {
  let close: () => Promise<void>;
  let url: string;
  if (mode === 'bare') {
    const body = process.env.BENCH_BODY ?? '{}';
    const app = Fastify({ logger: false });
    app.get('/*', async (_req, reply) => reply.type('application/json; charset=utf-8').send(body));
    url = await app.listen({ port: 0, host: '127.0.0.1' });
    close = () => app.close();
  } else {
    const config = loadConfig({ ...process.env, LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'silent', BOOTSTRAP: 'false', JWT_SECRET: 'bench-secret-0123456789-0123456789', ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64') });
    const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: config.databasePoolSize });
    const services = await buildServices(config, database);
    // bench/layers.ts prices the audit log: the same server with its writes made a no-op, switched
    // by a message between measures (so both sides run in one process, one JIT state).
    const record = services.audit.record.bind(services.audit);
    const setAudit = (on: boolean) => { services.audit.record = on ? record : async () => {}; };
    setAudit(process.env.BENCH_AUDIT !== 'off');
    // bench/versions.ts prices agent versions the same way: the version row's insert made a no-op
    // (the agent's change, its version number, audit entry and event stay). Only the repository's
    // insert is replaced, so the service's code runs unchanged on both sides.
    const insertVersion = AgentVersionRepository.prototype.insert;
    const setVersions = (on: boolean) => { AgentVersionRepository.prototype.insert = on ? insertVersion : async () => undefined as never; };
    setVersions(process.env.BENCH_VERSIONS !== 'off');
    process.on('message', (m) => {
      if (m === 'audit:on' || m === 'audit:off') {
        setAudit(m === 'audit:on');
        process.send!({ audit: m });
      }
      if (m === 'versions:on' || m === 'versions:off') {
        setVersions(m === 'versions:on');
        process.send!({ versions: m });
      }
    });
    const app = await buildApp(services);
    // BENCH_PORT: a port chosen beforehand, when PUBLIC_BASE_URL must name it (the browser preview's WebSocket).
    url = await app.listen({ port: Number(process.env.BENCH_PORT ?? 0), host: '127.0.0.1' });
    close = async () => { await app.close(); await services.close(); await database.close(); };
  }
  process.send!({ url });
  // bench/campaigns.ts samples the server's memory breakdown while it uploads.
  process.on('message', (m) => { if (m === 'memory') process.send!({ memory: process.memoryUsage() }); });
  process.on('SIGTERM', () => void close().then(() => process.exit(0)));
} catch (err) {
  process.send!({ error: String(err) });
  process.exit(1);
}
