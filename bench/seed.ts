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
  seed: { organizations: number; calls_per_org: number; seconds: number; reused: boolean };
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

async function ensureOrgs(database: Database, orgs: number): Promise<string[]> {
  const q = (text: string, params: unknown[] = []) => database.pool.query(text, params);
  const { rows } = await q("SELECT id FROM organizations WHERE name LIKE 'calls bench %' ORDER BY name");
  const ids = rows.map((r) => r.id as string);
  while (ids.length < orgs) {
    const id = (await provisionOrganization(database.db, { name: `calls bench ${String(ids.length).padStart(3, '0')}` })).organization_id;
    await q(`INSERT INTO agents (id, client_id, agent_name, language, stt_provider, tts_provider, llm_provider, llm_model, temperature, max_call_duration_seconds)
      SELECT 'agent_' || substr(md5($1 || a::text), 1, 12), $1, 'Bench agent ' || a, 'EN', 'deepgram', 'elevenlabs', 'openai', 'gpt-4o-mini', 0.7, 600
      FROM generate_series(1, 5) a`, [id]);
    ids.push(id);
  }
  return ids;
}

/** Brings every organization to `perOrg` finished calls and rebuilds the rollups from them; returns the seconds it took (0 when already seeded). */
async function seedCalls(database: Database, orgs: number, perOrg: number): Promise<number> {
  const q = (text: string, params: unknown[] = []) => database.pool.query(text, params);
  const { rows: [{ n }] } = await q("SELECT count(*)::int AS n FROM calls c JOIN organizations o ON o.id = c.client_id WHERE o.name LIKE 'calls bench %'");
  if (n === perOrg * orgs) return 0;
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

/**
 * Opens `url` (or the embedded database in `dataDir`), seeds it when needed, and issues a fresh key
 * for its first organization. `orgs` (default 100) organizations of `perOrg` calls each: one database
 * holds one shape, so 100 × 10k and 1 × 1M live in databases of their own.
 */
export async function seededCalls(options: { url?: string; dataDir?: string; perOrg: number; orgs?: number }): Promise<SeededDatabase> {
  const orgs = options.orgs ?? ORGS;
  const database = await openDatabase({ databaseUrl: options.url, dataDir: options.dataDir ?? '/tmp', poolSize: 4 });
  await runMigrations(database);
  await database.pool.query('CREATE TABLE IF NOT EXISTS bench_meta (key text PRIMARY KEY, value double precision NOT NULL)');
  const orgIds = await ensureOrgs(database, orgs);
  const seconds = await seedCalls(database, orgs, options.perOrg);
  const key = `seed_seconds_${orgs}x${options.perOrg}`;
  if (seconds > 0) await database.pool.query('INSERT INTO bench_meta VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value', [key, seconds]);
  const { rows: [recorded] } = await database.pool.query('SELECT value FROM bench_meta WHERE key = $1', [key]);
  const orgId = orgIds[0]!;
  const { rows: [owner] } = await database.pool.query('SELECT user_id FROM memberships WHERE client_id = $1 LIMIT 1', [orgId]);
  const apiKey = (await issueApiKey(database.db, orgId, { userId: owner.user_id, name: 'bench', role: 'user' })).key;
  return {
    database, orgId, apiKey, headers: { 'x-api-key': apiKey, 'x-organization-id': orgId },
    seed: { organizations: orgs, calls_per_org: options.perOrg, seconds: Number((recorded?.value ?? seconds).toFixed(1)), reused: seconds === 0 },
  };
}

/**
 * The usage rollups (call_usage_rollups, extensions.md §5 and §13) of the ended calls of one
 * organization, built in one statement the way `addCallToUsage` (src/modules/analytics/rollup-queries.ts)
 * adds each call: every grain (UTC day, hour, quarter, minute) and dimension (none, phone_number,
 * end_reason, campaign, agent_version, analysis_success, analysis_sentiment), the duration histogram,
 * and the analysis's judged / succeeded counts on every row. The migration's backfill (0022) predates
 * the last three dimensions and the analysis counts. Turn latencies are left out: the seeded
 * transcripts carry none, so `latency_histogram` is '{}' as the product writes it. bench/analysis-usage.ts
 * checks the result row by row against the product's own function replayed over the same calls.
 */
export const USAGE_ROLLUPS_BACKFILL = `INSERT INTO call_usage_rollups (client_id, grain, dimension, bucket, agent_id, call_type, status, value, calls, duration_seconds,
    cost, cost_stt, cost_llm, cost_tts, cost_telephony, cost_platform, histogram, analysis_judged, analysis_succeeded)
  SELECT client_id, grain, dimension, bucket, agent_id, call_type, status, value, sum(n)::int, sum(d)::float8,
    sum(c), sum(stt), sum(llm), sum(tts), sum(tel), sum(plat),
    (SELECT ('[' || min(bin) || ':' || max(bin) || ']={' || string_agg(coalesce((jsonb_object_agg(bin, n)) ->> b::text, 'NULL'), ',' ORDER BY b) || '}') FROM generate_series(min(bin), max(bin)) b)::int[],
    sum(judged)::int, sum(succeeded)::int
  FROM (
    SELECT x.client_id, g.grain, dm.dimension, date_bin(g.step, x.at, TIMESTAMPTZ '2000-01-01 00:00:00+00') AS bucket, x.agent_id, x.call_type, x.status, dm.value, x.bin,
      count(*) AS n, sum(x.dur) AS d, sum(x.cost) AS c, sum(x.stt) AS stt, sum(x.llm) AS llm, sum(x.tts) AS tts, sum(x.tel) AS tel, sum(x.plat) AS plat,
      count(*) FILTER (WHERE x.success IS NOT NULL) AS judged, count(*) FILTER (WHERE x.success = 'true') AS succeeded
    FROM (
      SELECT client_id, agent_id, call_type, status, coalesce(start_time, created_at) AS at, coalesce(duration_seconds, 0) AS dur, coalesce(total_cost, 0) AS cost,
        coalesce((cost_breakdown ->> 'stt')::numeric, 0) AS stt, coalesce((cost_breakdown ->> 'llm')::numeric, 0) AS llm, coalesce((cost_breakdown ->> 'tts')::numeric, 0) AS tts,
        coalesce((cost_breakdown ->> 'telephony')::numeric, 0) AS tel, coalesce((cost_breakdown ->> 'platform')::numeric, 0) AS plat,
        CASE WHEN coalesce(duration_seconds, 0) <= 0 THEN 0 WHEN duration_seconds < 0.1 THEN 1 ELSE least(180, 2 + floor(ln(duration_seconds / 0.1) / ln(1.08))::int) END AS bin,
        CASE WHEN call_type = 'outbound' THEN from_number ELSE to_number END AS number, end_reason, campaign_id, agent_version,
        analysis ->> 'success' AS success, analysis ->> 'sentiment' AS sentiment
      FROM calls WHERE client_id = $1 AND status IN ('completed', 'failed', 'busy', 'no_answer', 'canceled')
    ) x
    CROSS JOIN (VALUES ('day', interval '1 day'), ('hour', interval '1 hour'), ('quarter', interval '15 minutes'), ('minute', interval '1 minute')) AS g(grain, step)
    CROSS JOIN LATERAL (VALUES ('none', ''), ('phone_number', coalesce(x.number, '')), ('end_reason', coalesce(x.end_reason, '')), ('campaign', coalesce(x.campaign_id, '')),
      ('agent_version', coalesce(x.agent_version::text, '')), ('analysis_success', coalesce(x.success, '')), ('analysis_sentiment', coalesce(x.sentiment, ''))) AS dm(dimension, value)
    GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9
  ) per_bin
  GROUP BY 1, 2, 3, 4, 5, 6, 7, 8`;

/** The older per-agent rollups (call_rollups: minute, quarter, hour; each agent and '*') of one organization's ended calls, as `addCallToRollups` adds them. */
export const CALL_ROLLUPS_BACKFILL = `INSERT INTO call_rollups (client_id, agent_id, grain, bucket, calls, cost_credits, duration_seconds)
  SELECT client_id, a.agent, g.grain, date_bin(g.step, coalesce(start_time, created_at), TIMESTAMPTZ '2000-01-01 00:00:00+00'), count(*), sum(coalesce(total_cost, 0)), sum(coalesce(duration_seconds, 0))
  FROM calls
    CROSS JOIN (VALUES ('minute', interval '1 minute'), ('quarter', interval '15 minutes'), ('hour', interval '1 hour')) AS g(grain, step)
    CROSS JOIN LATERAL (VALUES (agent_id), ('*')) AS a(agent)
  WHERE client_id = $1 AND status IN ('completed', 'failed', 'busy', 'no_answer', 'canceled')
  GROUP BY 1, 2, 3, 4`;
