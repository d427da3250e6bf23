/**
 * The calls benchmarks' data: 100 organizations with finished calls over the last 30 days and the
 * rollups built from them, seeded directly in SQL once per database and reused by later runs. How long
 * the seeding took is kept in the database (`bench_meta`), so a run that reuses it still reports it.
 */
import pg from 'pg';
import { openDatabase, runMigrations, type Database } from '../src/db/database.ts';
import { provisionOrganization } from '../src/modules/organizations/service.ts';
import { issueApiKey } from '../src/modules/api-keys/service.ts';

export const ORGS = 100;

export interface SeededDatabase {
  database: Database;
  /** The first organization, with a fresh user key, as `{x-api-key, x-organization-id}`. */
  orgId: string;
  apiKey: string;
  headers: Record<string, string>;
  seed: { calls_per_org: number; seconds: number; reused: boolean };
}

/** The bench database `name` on the local server (created when missing), or DATABASE_URL with `name` as a suffix. */
export async function benchDatabase(name: string): Promise<string> {
  const base = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/switchboard';
  const url = new URL(base);
  const database = `${url.pathname.slice(1) || 'switchboard'}_${name}`;
  const admin = new pg.Client({ connectionString: Object.assign(new URL(base), { pathname: '/postgres' }).toString() });
  await admin.connect();
  const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
  if (!rowCount) await admin.query(`CREATE DATABASE "${database}"`);
  await admin.end();
  url.pathname = `/${database}`;
  return url.toString();
}

async function ensureOrgs(database: Database): Promise<string[]> {
  const q = (text: string, params: unknown[] = []) => database.pool.query(text, params);
  const { rows } = await q("SELECT id FROM organizations WHERE name LIKE 'calls bench %' ORDER BY name");
  const ids = rows.map((r) => r.id as string);
  while (ids.length < ORGS) {
    const id = (await provisionOrganization(database.db, { name: `calls bench ${String(ids.length).padStart(3, '0')}` })).organization_id;
    await q(`INSERT INTO agents (id, client_id, agent_name, language, stt_provider, tts_provider, llm_provider, llm_model, temperature, max_call_duration_seconds)
      SELECT 'agent_' || substr(md5($1 || a::text), 1, 12), $1, 'Bench agent ' || a, 'EN', 'deepgram', 'elevenlabs', 'openai', 'gpt-4o-mini', 0.7, 600
      FROM generate_series(1, 5) a`, [id]);
    ids.push(id);
  }
  return ids;
}

/** Brings every organization to `perOrg` finished calls and rebuilds the rollups from them; returns the seconds it took (0 when already seeded). */
async function seedCalls(database: Database, perOrg: number): Promise<number> {
  const q = (text: string, params: unknown[] = []) => database.pool.query(text, params);
  const { rows: [{ n }] } = await q("SELECT count(*)::int AS n FROM calls c JOIN organizations o ON o.id = c.client_id WHERE o.name LIKE 'calls bench %'");
  if (n === perOrg * ORGS) return 0;
  const started = performance.now();
  await q(`INSERT INTO calls (call_sid, client_id, agent_id, agent_name, call_type, status, from_number, to_number, recording_enabled,
      start_time, end_time, end_reason, duration_seconds, turn_count, total_cost, billing_status, created_at, updated_at)
    SELECT 'call_' || substr(md5(o.id || g::text), 1, 20), o.id, 'agent_' || substr(md5(o.id || (1 + g % 5)::text), 1, 12), 'Bench agent ' || (1 + g % 5),
      (ARRAY['inbound','outbound','preview'])[1 + g % 3], 'completed', '+14155550100', '+1415555' || lpad((g % 10000)::text, 4, '0'), false,
      t, t + (d || ' seconds')::interval, 'user_hangup', d, 6, round((d * 0.05)::numeric, 4), 'billed', t, t
    FROM (SELECT id FROM organizations WHERE name LIKE 'calls bench %') o,
      LATERAL (SELECT g, now() - random() * interval '30 days' AS t, 20 + floor(random() * 400) AS d
               FROM generate_series((SELECT count(*) FROM calls WHERE client_id = o.id) + 1, $1) g) s`, [perOrg]);
  await q("DELETE FROM call_rollups WHERE client_id IN (SELECT id FROM organizations WHERE name LIKE 'calls bench %')");
  for (const [grain, step] of [['minute', 60], ['quarter', 900], ['hour', 3600]] as const) {
    for (const agentColumn of ['agent_id', "'*'"]) {
      await q(`INSERT INTO call_rollups (client_id, agent_id, grain, bucket, calls, cost_credits, duration_seconds)
        SELECT client_id, ${agentColumn}, '${grain}', to_timestamp(floor(extract(epoch FROM start_time) / ${step}) * ${step}), count(*), sum(total_cost), sum(duration_seconds)
        FROM calls WHERE client_id IN (SELECT id FROM organizations WHERE name LIKE 'calls bench %') GROUP BY 1, 2, 4`);
    }
  }
  await q('ANALYZE calls; ANALYZE call_rollups');
  return (performance.now() - started) / 1000;
}

/** Opens `url` (or the embedded database in `dataDir`), seeds it when needed, and issues a fresh key for its first organization. */
export async function seededCalls(options: { url?: string; dataDir?: string; perOrg: number }): Promise<SeededDatabase> {
  const database = await openDatabase({ databaseUrl: options.url, dataDir: options.dataDir ?? '/tmp', poolSize: 4 });
  await runMigrations(database);
  await database.pool.query('CREATE TABLE IF NOT EXISTS bench_meta (key text PRIMARY KEY, value double precision NOT NULL)');
  const orgIds = await ensureOrgs(database);
  const seconds = await seedCalls(database, options.perOrg);
  const key = `seed_seconds_${options.perOrg}`;
  if (seconds > 0) await database.pool.query('INSERT INTO bench_meta VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value', [key, seconds]);
  const { rows: [recorded] } = await database.pool.query('SELECT value FROM bench_meta WHERE key = $1', [key]);
  const orgId = orgIds[0]!;
  const { rows: [owner] } = await database.pool.query('SELECT user_id FROM memberships WHERE client_id = $1 LIMIT 1', [orgId]);
  const apiKey = (await issueApiKey(database.db, orgId, { userId: owner.user_id, name: 'bench', role: 'user' })).key;
  return {
    database, orgId, apiKey, headers: { 'x-api-key': apiKey, 'x-organization-id': orgId },
    seed: { calls_per_org: options.perOrg, seconds: Number((recorded?.value ?? seconds).toFixed(1)), reused: seconds === 0 },
  };
}
