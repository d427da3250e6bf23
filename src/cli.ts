import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { openDatabase, runMigrations } from './db/database.ts';
import { DataDirLockedError } from './db/lock.ts';
import { resolveJwtSecret, signDevelopmentToken } from './core/auth/tokens.ts';
import { buildServices, type Services } from './services.ts';
import { runWorker } from './workers.ts';
import { seedDemo } from './demo/seed.ts';
import { AppError } from './core/errors.ts';

const HELP = `switchboard <command> [options]

Commands:
  auth:token --email EMAIL [--sub SUBJECT] [--ttl SECONDS]
      Print a JWT signed by the embedded identity provider (secret in DATA_DIR).
      Opens no database: the user is provisioned on the first request with the token.
      --sub defaults to the email; --ttl defaults to 3600 and is at most
      JWT_MAX_TTL_SECONDS (default 86400), the longest lifetime the server accepts.
  auth:sign-in-link --email EMAIL
      Print a console sign-in link for the address (single use, 15 minutes), as the first run
      prints one for ADMIN_EMAIL; links go to {PUBLIC_BASE_URL}/sign-in.
  org:create --name NAME [--email EMAIL]
      Create an organization with an admin user and an admin API key; prints
      {organization_id, user_id, api_key: {key_id, key, role}} as JSON.
      Works whether or not the server runs (goes through its database socket).
  demo:seed --url URL --api-key KEY --org ORG_ID [--calls N]
      Fill an organization through the public API, as the voice runtime and a user would:
      agents, a tool, a document, a SIP number and N finished calls (default 50) over the
      last 30 days with transcripts, costs and WAV recordings. Shows a progress bar.
  credits:adjust --org ORG_ID --credits N --reason TEXT
      Add (or with a negative N, written --credits=-N, take) credits as an adjustment on the organization's ledger,
      e.g. support credits; refused if the balance would go below zero. Prints the ledger row.
  org:limits --org ORG_ID --max-concurrent-calls N
      Set how many calls not yet final the organization may have at once (default 10; 0 stops
      new calls). Prints {organization_id, max_concurrent_calls}.
  mcp --url URL --api-key KEY --org ORG_ID [--http [--port N] [--host H] [--allowed-hosts A,B]]
      A Model Context Protocol server acting with the key, through the API at URL: on stdin and
      stdout, or with --http as Streamable HTTP at http://HOST:PORT/mcp (default 127.0.0.1:3100).
      Over HTTP every request needs Authorization: Bearer <token> (MCP_TOKEN, or a token generated
      and printed at start) and a Host (and Origin, if sent) naming localhost, 127.0.0.1, [::1], HOST
      or one of --allowed-hosts; a non-loopback HOST needs MCP_TOKEN.
      Tools: list_calls, get_call, search_knowledge_base, get_call_analytics, list_agents, get_agent,
      update_agent, list_phone_numbers; each offered only when the key's role and scopes allow it.
  worker
      Run the job workers (document indexing) without the HTTP server, for scale-out; stops
      on SIGTERM/SIGINT after the running job. Set IN_PROCESS_WORKER=false on the servers
      to leave all jobs to such workers.
  runtime [--port N] [--host H]
      Run the voice runtime alone, for scale-out (extensions.md §10): only its stream routes
      (/api/runtime/carrier_a/stream, /api/runtime/preview), /api/health and /metrics, on
      HOST:PORT (default HOST and 3001). It reaches the API at RUNTIME_API_URL (default
      PUBLIC_BASE_URL) with each call's token and opens no database. SIGTERM/SIGINT drain: new
      streams are refused, calls in progress go on for up to RUNTIME_DRAIN_SECONDS (default 600).
      Set RUNTIME=off on the API servers and RUNTIME_STREAM_URL to the runtimes' address.
  migrate
      Apply pending database migrations (the server also applies them on start).
  help
      Show this text.

Environment: DATABASE_URL (a PostgreSQL server) or DATA_DIR (embedded database, default ./data),
and the JWT_* settings of the server.`;

type Options = Record<string, string | boolean | undefined>;

function required(options: Options, name: string): string {
  const value = options[name];
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

class UsageError extends Error {}

/** Runs a one-off command on the services of the composition root (no job queue), then closes the database. */
async function withServices<T>(config: Config, run: (services: Services) => Promise<T>): Promise<T> {
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 2, shareRunningServer: true });
  try {
    await runMigrations(database);
    const services = await buildServices(config, database, { startQueue: false });
    try {
      return await run(services);
    } catch (err) {
      // A refusal of the platform's rules is the operator's to fix, told as a usage error.
      if (err instanceof AppError && err.status < 500) throw new UsageError(err.message);
      throw err;
    } finally {
      await services.close();
    }
  } finally {
    await database.close();
  }
}

const commands: Record<string, (config: Config, options: Options) => Promise<void>> = {
  async 'auth:token'(config, options) {
    const email = required(options, 'email').toLowerCase();
    const ttl = options.ttl === undefined ? Math.min(3600, config.jwt.maxTtlSeconds) : Number(options.ttl);
    const max = config.jwt.maxTtlSeconds;
    if (!Number.isInteger(ttl) || ttl < 1 || ttl > max) throw new UsageError(`--ttl must be 1 to ${max} seconds (JWT_MAX_TTL_SECONDS)`);
    if (config.jwt.jwksUrl) throw new UsageError('JWT_JWKS_URL is set: tokens come from your identity provider, not from here');
    const secret = resolveJwtSecret(config.jwt, config.dataDir)!;
    const subject = typeof options.sub === 'string' && options.sub !== '' ? options.sub : email;
    process.stdout.write(`${await signDevelopmentToken(config.jwt, secret, { subject, email, ttlSeconds: ttl })}\n`);
  },

  async 'auth:sign-in-link'(config, options) {
    const email = required(options, 'email');
    if (!/^[^\s@]+@[^\s@]+$/.test(email)) throw new UsageError('--email must be an e-mail address');
    const link = await withServices(config, (services) => services.sessions.createLink(email));
    process.stdout.write(`${link}\n`);
  },

  async 'org:create'(config, options) {
    const name = required(options, 'name');
    if (name.length > 200) throw new UsageError('--name is at most 200 characters');
    const email = typeof options.email === 'string' ? options.email : null;
    const created = await withServices(config, (services) => services.organizations.provision({ name, email }));
    process.stdout.write(`${JSON.stringify(created, null, 2)}\n`);
  },

  async worker(config) {
    await runWorker(config, (line) => process.stdout.write(`${line}\n`));
  },

  async mcp(config, options) {
    const target = { url: required(options, 'url'), apiKey: required(options, 'api-key'), organizationId: required(options, 'org') };
    const { serveHttp, serveStdio } = await import('./mcp/server.ts'); // the MCP SDK only for this command
    if (!options.http) {
      await serveStdio(target);
      return new Promise<void>(() => {}); // until stdin closes (the process then exits)
    }
    const port = options.port === undefined ? 3100 : Number(options.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError('--port must be 0 to 65535');
    const host = typeof options.host === 'string' ? options.host : '127.0.0.1';
    const allowedHosts = typeof options['allowed-hosts'] === 'string' ? options['allowed-hosts'].split(',').map((h) => h.trim()).filter(Boolean) : [];
    const { isLoopbackHost } = await import('./mcp/http-guard.ts');
    if (!config.mcpToken && !isLoopbackHost(host)) {
      throw new UsageError(`--host ${host} listens beyond this machine: set MCP_TOKEN (openssl rand -base64 32) to allow it`);
    }
    const { server, token, generated } = await serveHttp({ ...target, port, host, token: config.mcpToken, allowedHosts });
    const address = server.address() as { port: number };
    process.stdout.write(`MCP (Streamable HTTP) at http://${host.includes(':') ? `[${host}]` : host}:${address.port}/mcp\n`);
    // A generated token is shown once, here: the client sends it as Authorization: Bearer <token>.
    if (generated) process.stdout.write(`MCP token (send Authorization: Bearer <token>; set MCP_TOKEN to choose it): ${token}\n`);
    await new Promise<void>((resolve) => { process.once('SIGTERM', resolve); process.once('SIGINT', resolve); });
    server.close();
  },

  async runtime(config, options) {
    const port = options.port === undefined ? 3001 : Number(options.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError('--port must be 0 to 65535');
    const host = typeof options.host === 'string' ? options.host : config.host;
    const { startRuntimeServer } = await import('@switchboard/runtime'); // the audio and provider code only for this command
    const { runtimePrices } = await import('./voice-runtime.ts');
    const runtime = await startRuntimeServer({
      apiBaseUrl: config.runtime.apiUrl, prices: runtimePrices(config.runtime.prices), port, host, drainSeconds: config.runtime.drainSeconds,
    });
    process.stdout.write(`Voice runtime at ${runtime.url} (streams /api/runtime/carrier_a/stream and /api/runtime/preview), API at ${config.runtime.apiUrl}\n`);
    const signal = await new Promise<string>((resolve) => { process.once('SIGTERM', () => resolve('SIGTERM')); process.once('SIGINT', () => resolve('SIGINT')); });
    process.stdout.write(`${signal}: draining ${runtime.calls.active} call(s) for up to ${config.runtime.drainSeconds} s\n`);
    await runtime.stop();
  },

  async 'demo:seed'(_config, options) {
    const calls = options.calls === undefined ? 50 : Number(options.calls);
    if (!Number.isInteger(calls) || calls < 0 || calls > 100_000) throw new UsageError('--calls must be 0 to 100000');
    const result = await seedDemo({ url: required(options, 'url'), apiKey: required(options, 'api-key'), orgId: required(options, 'org'), calls });
    process.stdout.write(`${JSON.stringify({ agents: result.agentIds.length, calls: result.callSids.length, phone_number_id: result.phoneNumberId }, null, 2)}\n`);
  },

  async 'org:limits'(config, options) {
    const orgId = required(options, 'org');
    const max = Number(required(options, 'max-concurrent-calls'));
    if (!Number.isInteger(max) || max < 0) throw new UsageError('--max-concurrent-calls must be a whole number, 0 or more');
    const set = await withServices(config, (services) => services.limits.setMaxConcurrentCalls(orgId, max));
    process.stdout.write(`${JSON.stringify(set, null, 2)}\n`);
  },

  async 'credits:adjust'(config, options) {
    const orgId = required(options, 'org');
    const amount = Number(required(options, 'credits'));
    const reason = required(options, 'reason');
    if (!Number.isFinite(amount) || amount === 0 || Math.abs(amount) > 1e9) throw new UsageError('--credits must be a non-zero number');
    const row = await withServices(config, (services) => services.billing.adjust(orgId, amount, reason));
    process.stdout.write(`${JSON.stringify({ transaction_id: row.transaction_id, amount: row.amount, balance_after: row.balance_after }, null, 2)}\n`);
  },

  async migrate(config) {
    const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 2, shareRunningServer: true });
    try {
      await runMigrations(database);
    } finally {
      await database.close();
    }
    process.stdout.write('migrations applied\n');
  },
};

/** parseArgs, with its complaints (unknown option, missing value) reported as usage errors. */
function parseOptions(config: Parameters<typeof parseArgs>[0]): { values: Options } {
  try {
    return parseArgs(config) as { values: Options };
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  const run = commands[command];
  if (!run) throw new UsageError(`unknown command "${command}"`);
  const { values } = parseOptions({
    args: rest,
    options: {
      email: { type: 'string' },
      sub: { type: 'string' },
      ttl: { type: 'string' },
      name: { type: 'string' },
      url: { type: 'string' },
      'api-key': { type: 'string' },
      org: { type: 'string' },
      calls: { type: 'string' },
      credits: { type: 'string' },
      reason: { type: 'string' },
      'max-concurrent-calls': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
      http: { type: 'boolean' },
      port: { type: 'string' },
      host: { type: 'string' },
      'allowed-hosts': { type: 'string' },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  await run(loadConfig(), values);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    const known = err instanceof UsageError || err instanceof ConfigError || err instanceof DataDirLockedError;
    const message = err instanceof Error ? err.message : String(err);
    process.stderr.write(`switchboard: ${message}${err instanceof UsageError ? '\nRun "switchboard help" for usage.' : ''}\n`);
    if (!known && err instanceof Error && err.stack) process.stderr.write(`${err.stack}\n`);
    process.exit(err instanceof UsageError ? 2 : 1);
  },
);
