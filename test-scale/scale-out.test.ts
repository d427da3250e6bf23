/**
 * Issue 19, item 7: two server processes (IN_PROCESS_WORKER=false) behind a round-robin proxy, two
 * `switchboard worker` processes, one PostgreSQL, Redis for the shared rate-limit count and s3rver as
 * the object store, all on 127.0.0.1. A mixed load runs for SCALE_SECONDS (default 60): API keys
 * created through one server and revoked through it while the other holds them in its cache,
 * documents uploaded and indexed, calls reported and ended with a cost, credits bought and paid. A
 * worker and a server are SIGKILLed a quarter of the way in (and restarted, as a supervisor would),
 * PostgreSQL is restarted at the middle. Then every acknowledged write must be present, exactly once.
 * Needs a PostgreSQL server it may restart (DATABASE_URL; `.ci/run` runs it on its PostgreSQL pass).
 * Figures: printed, and written to bench/results/scale-out.json.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { promisify } from 'node:util';
import pg from 'pg';
import S3rver from 's3rver';
import { openDatabase, runMigrations } from '../src/db/database.ts';
import { newId } from '../src/core/ids.ts';
import { CreditLedger } from '../src/modules/billing/ledger.ts';
import { provisionOrganization } from '../src/modules/organizations/service.ts';
import { freePort } from '../test/helpers/net.ts';
import { Member, Tally, startProxy, untilReady } from './cluster.ts';

const SECONDS = Number(process.env.SCALE_SECONDS ?? 60);
const baseUrl = process.env.DATABASE_URL;
const run = promisify(execFile);
const TEXT = 'Opening hours: Monday to Friday, 8 to 18. Returns are accepted within 30 days with the receipt. '.repeat(12);

async function restartPostgres(): Promise<void> {
  const major = fs.readdirSync('/etc/postgresql').sort((a, b) => Number(a) - Number(b)).at(-1)!;
  await run('pg_ctlcluster', ['--skip-systemctl-redirect', major, 'main', 'restart']);
}

describe('scale-out: two servers, two workers, one PostgreSQL, Redis, S3', { skip: baseUrl ? false : 'needs DATABASE_URL (a PostgreSQL server it may restart)' }, () => {
  const cleanup: Array<() => Promise<unknown> | unknown> = [];
  after(async () => {
    for (const step of cleanup.reverse()) await Promise.resolve().then(step).catch(() => {});
  });

  test(`a ${SECONDS} s mixed load survives SIGKILLed processes and a PostgreSQL restart with every acknowledged write present once`, { timeout: (SECONDS + 240) * 1000 }, async () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sbscale-'));
    cleanup.push(() => fs.rmSync(tmp, { recursive: true, force: true }));
    const url = new URL(baseUrl!);
    const dbName = `${url.pathname.slice(1) || 'postgres'}_scale_${Date.now()}`;
    const admin = new pg.Client({ connectionString: Object.assign(new URL(baseUrl!), { pathname: '/postgres' }).toString() });
    await admin.connect();
    await admin.query(`CREATE DATABASE "${dbName}"`);
    await admin.end();
    url.pathname = `/${dbName}`;
    const databaseUrl = url.toString();
    cleanup.push(async () => {
      const c = new pg.Client({ connectionString: Object.assign(new URL(baseUrl!), { pathname: '/postgres' }).toString() });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
      await c.end();
    });
    const database = await openDatabase({ databaseUrl, dataDir: tmp, poolSize: 2 });
    cleanup.push(() => database.close());
    await runMigrations(database);
    const org = await provisionOrganization(database.db, { name: 'Scale-out' });
    await new CreditLedger(database.db).credit(org.organization_id, 'adjustment', newId('adj'), 1_000_000, 'scale-out load');

    const s3 = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: path.join(tmp, 's3'), configureBuckets: [{ name: 'scale', configs: [] }] });
    const { port: s3Port } = await s3.run();
    cleanup.push(() => s3.close());

    const ports = [await freePort(), await freePort()];
    const servers = ports.map((p) => `http://127.0.0.1:${p}`);
    const proxyPort = await freePort();
    const common = {
      DATABASE_URL: databaseUrl, JWT_SECRET: 'scale-out-secret-0123456789-0123456789', ENCRYPTION_KEY: Buffer.alloc(32, 9).toString('base64'),
      IN_PROCESS_WORKER: 'false', REDIS_URL: 'redis://127.0.0.1:6379', STORAGE_BACKEND: 's3', S3_BUCKET: 'scale',
      S3_ENDPOINT: `http://127.0.0.1:${s3Port}`, S3_ACCESS_KEY_ID: 'S3RVER', S3_SECRET_ACCESS_KEY: 'S3RVER',
      RATE_LIMIT_PER_MINUTE: '1000000', RATE_LIMIT_PUBLIC_PER_MINUTE: '1000000', HOST: '127.0.0.1', LOG_LEVEL: 'warn', BOOTSTRAP: 'false',
      PUBLIC_BASE_URL: `http://127.0.0.1:${proxyPort}`, JOB_EXPIRE_SECONDS: '10', JOB_SUPERVISE_SECONDS: '2',
    };
    const serverMembers = ports.map((p, i) => new Member(`server ${i + 1}`, ['src/server.ts'], { ...common, PORT: String(p), DATA_DIR: path.join(tmp, `s${i}`) }).start());
    const workers = [0, 1].map((i) => new Member(`worker ${i + 1}`, ['src/cli.ts', 'worker'], { ...common, DATA_DIR: path.join(tmp, `w${i}`) }).start());
    cleanup.push(() => Promise.all([...serverMembers, ...workers].map((m) => m.kill())));
    for (const s of servers) await untilReady(s, 60_000).catch((err) => { throw new Error(`${err.message}\n${serverMembers.map((m) => m.output).join('\n')}`); });
    // On the port PUBLIC_BASE_URL names: the checkout links the servers hand out lead through it.
    const proxy = await startProxy(servers, proxyPort);
    cleanup.push(() => proxy.close());
    const asAdmin = { 'x-api-key': org.api_key.key, 'x-organization-id': org.organization_id, 'content-type': 'application/json' };
    const agent = await (await fetch(`${proxy.url}/api/agents`, { method: 'POST', headers: asAdmin, body: JSON.stringify({ agent_name: 'Scale' }) })).json() as any;

    const startedAt = performance.now();
    const tally = new Tally(startedAt);
    const deadline = startedAt + SECONDS * 1000;
    const acked = { calls: [] as string[], documents: [] as string[], keysCreated: [] as string[], keysRevoked: [] as string[], purchases: [] as string[] };
    const leaks: string[] = [];
    const refusedPayments: string[] = [];
    let revocationChecks = 0;
    const json = (body: unknown) => JSON.stringify(body);

    const callsLoop = async () => {
      while (performance.now() < deadline) {
        const created = await tally.send('create call', () => fetch(`${proxy.url}/api/calls`, { method: 'POST', headers: asAdmin, body: json({ agent_id: agent.data.agent_id, call_type: 'inbound', to_number: '+14155550100', from_number: '+14155550111' }) }));
        if (created?.status !== 200) continue;
        const sid = ((await created.json()) as any).data.call_sid;
        const ended = await tally.send('end call', () => fetch(`${proxy.url}/api/calls/${sid}`, { method: 'PATCH', headers: asAdmin, body: json({ status: 'completed', end_reason: 'user_hangup', total_cost: 3 }) }));
        if (ended?.status === 200) acked.calls.push(sid);
      }
    };
    const documentsLoop = async () => {
      while (performance.now() < deadline) {
        const res = await tally.send('upload document', () => fetch(`${proxy.url}/api/knowledge-base`, { method: 'POST', headers: asAdmin, body: json({ name: `doc ${acked.documents.length}`, text: TEXT }) }));
        if (res?.status === 200) acked.documents.push(((await res.json()) as any).data.documentation_id);
        await new Promise((r) => setTimeout(r, 200));
      }
    };
    const keysLoop = async () => {
      for (let i = 0; performance.now() < deadline; i++) {
        const [a, b] = i % 2 ? [servers[1]!, servers[0]!] : [servers[0]!, servers[1]!];
        const created = await tally.send('create key', () => fetch(`${a}/api/api-keys`, { method: 'POST', headers: asAdmin, body: json({ name: `k${i}`, role: 'user' }) }));
        if (created?.status !== 200) continue;
        const key = ((await created.json()) as any).data;
        acked.keysCreated.push(key.key_id);
        const asKey = { 'x-api-key': key.key, 'x-organization-id': org.organization_id };
        await tally.send('use key', () => fetch(`${b}/api/agents`, { headers: asKey })); // now in b's cache
        const revoked = await tally.send('revoke key', () => fetch(`${a}/api/api-keys/${key.key_id}`, { method: 'DELETE', headers: asAdmin }));
        if (revoked?.status !== 200) continue;
        acked.keysRevoked.push(key.key_id);
        const refused = await tally.send('use revoked key', () => fetch(`${b}/api/agents`, { headers: asKey }));
        if (!refused) continue;
        revocationChecks++;
        if (refused.status !== 401) leaks.push(`${key.key_id} answered ${refused.status} by ${b} after its revocation by ${a}`);
      }
    };
    const purchasesLoop = async () => {
      while (performance.now() < deadline) {
        const res = await tally.send('purchase', () => fetch(`${proxy.url}/api/billing/credits/purchase`, { method: 'POST', headers: asAdmin, body: json({ amount: 5 }) }));
        if (res && res.status !== 200) refusedPayments.push(`purchase ${res.status} ${(await res.text()).slice(0, 200)}`);
        if (res?.status !== 200) continue;
        const checkout = (await res.json()) as any;
        const pay = `${proxy.url}${new URL(checkout.checkout_url).pathname}/pay`;
        const paid = await tally.send('pay', () => fetch(pay, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '' }));
        if (paid?.status === 200) acked.purchases.push(checkout.session_id);
        else if (paid) refusedPayments.push(`${paid.status} ${(await paid.text()).slice(0, 200)}`);
        await new Promise((r) => setTimeout(r, 500));
      }
    };

    const chaos = async () => {
      const figures: Record<string, number> = {};
      await new Promise((r) => setTimeout(r, SECONDS * 250));
      figures.killed_at_ms = performance.now() - startedAt;
      await Promise.all([serverMembers[1]!.kill(), workers[0]!.kill()]);
      serverMembers[1]!.start();
      workers[0]!.start();
      figures.killed_server_ready_ms = await untilReady(servers[1]!, 60_000);
      await new Promise((r) => setTimeout(r, Math.max(0, startedAt + SECONDS * 500 - performance.now())));
      figures.postgres_restart_at_ms = performance.now() - startedAt;
      await restartPostgres();
      figures.postgres_restart_done_ms = performance.now() - startedAt;
      const ready = await Promise.all(servers.map((s, i) => untilReady(s, 30_000).catch((err) => {
        const member = serverMembers[i]!;
        throw new Error(`${err.message} (${member.name} ${member.child.exitCode === null && member.child.signalCode === null ? 'running' : `exited ${member.child.exitCode ?? member.child.signalCode}`}):\n${member.output.slice(-4000)}`);
      })));
      figures.servers_ready_after_postgres_ms = Math.max(...ready);
      return figures;
    };

    const [figures] = await Promise.all([chaos(), callsLoop(), callsLoop(), documentsLoop(), keysLoop(), purchasesLoop()]);
    const loadMs = performance.now() - startedAt;

    // Rate limits are one count across both servers: alternating, Remaining falls by one each time.
    const rateKey = (await (await fetch(`${servers[0]}/api/api-keys`, { method: 'POST', headers: asAdmin, body: json({ name: 'rate', role: 'user' }) })).json() as any).data.key;
    // A sequence that straddles the start of a new window sees the count reset: it is tried again.
    let remaining: number[] = [];
    for (let attempt = 0; attempt < 3; attempt++) {
      remaining = [];
      for (let i = 0; i < 10; i++) {
        const res = await fetch(`${servers[i % 2]}/api/agents`, { headers: { 'x-api-key': rateKey, 'x-organization-id': org.organization_id } });
        remaining.push(Number(res.headers.get('ratelimit-remaining')));
      }
      if (remaining.every((r, i) => i === 0 || r <= remaining[i - 1]!)) break;
    }
    assert.deepEqual(remaining.slice(1).map((r, i) => remaining[i]! - r), Array(9).fill(1), `one shared count: ${remaining.join(', ')}`);

    // Every acknowledged document is indexed once: completed, with one document.completed event.
    const docDeadline = performance.now() + 120_000;
    let pending = acked.documents.length;
    while (pending > 0 && performance.now() < docDeadline) {
      const { rows } = await database.pool.query(`SELECT count(*)::int AS n FROM documents WHERE client_id = $1 AND id = ANY($2) AND processing_status <> 'completed'`, [org.organization_id, acked.documents]);
      pending = rows[0].n;
      if (pending) await new Promise((r) => setTimeout(r, 500));
    }
    assert.equal(pending, 0, 'every acknowledged document completed');
    const q = async (text: string, values: unknown[]) => (await database.pool.query(text, values)).rows;
    const docs = await q(`SELECT d.id, (SELECT count(*)::int FROM events e WHERE e.client_id = d.client_id AND e.type = 'document.completed' AND e.data->>'documentation_id' = d.id) AS completions,
      (SELECT count(*)::int FROM document_chunks c WHERE c.document_id = d.id) AS chunks FROM documents d WHERE d.client_id = $1 AND d.id = ANY($2)`, [org.organization_id, acked.documents]);
    assert.equal(docs.length, acked.documents.length, 'no acknowledged document lost');
    assert.deepEqual([...new Set(docs.map((d) => d.completions))], [1], 'each document completed exactly once');
    assert.equal(new Set(docs.map((d) => d.chunks)).size, 1, 'the same text gives every document the same chunks');

    // Every acknowledged call is there, ended, and billed exactly once; the balance is its ledger's sum.
    const calls = await q(`SELECT c.call_sid, c.status, (SELECT count(*)::int FROM credit_transactions t WHERE t.client_id = c.client_id AND t.kind = 'call_usage' AND t.source_id = c.call_sid) AS debits
      FROM calls c WHERE c.client_id = $1 AND c.call_sid = ANY($2)`, [org.organization_id, acked.calls]);
    assert.equal(calls.length, acked.calls.length, 'no acknowledged call lost');
    assert.ok(calls.every((c) => c.status === 'completed' && c.debits === 1), 'each ended call billed once');
    const [ledger] = await q(`SELECT (SELECT balance FROM credit_accounts WHERE client_id = $1) AS balance, (SELECT sum(amount) FROM credit_transactions WHERE client_id = $1) AS total`, [org.organization_id]);
    assert.equal(Number(ledger.balance), Number(ledger.total), 'the balance is the sum of its ledger');

    const purchases = await q(`SELECT s.id, s.status, (SELECT count(*)::int FROM credit_transactions t WHERE t.client_id = s.client_id AND t.kind = 'purchase' AND t.source_id = s.id) AS credits
      FROM checkout_sessions s WHERE s.client_id = $1 AND s.id = ANY($2)`, [org.organization_id, acked.purchases]);
    assert.equal(purchases.length, acked.purchases.length);
    assert.ok(purchases.every((p) => p.status === 'completed' && p.credits === 1), 'each paid checkout credited once');

    const keys = await q('SELECT id, status FROM api_keys WHERE client_id = $1 AND id = ANY($2)', [org.organization_id, acked.keysCreated]);
    assert.equal(keys.length, acked.keysCreated.length, 'no acknowledged key lost');
    const revokedSet = new Set(acked.keysRevoked);
    assert.ok(keys.filter((k) => revokedSet.has(k.id)).every((k) => k.status === 'revoked'));
    assert.deepEqual(leaks, [], 'a key revoked through one server is refused by the other on the very next request');

    const result = {
      seconds: SECONDS, load_ms: Math.round(loadMs), requests: tally.requests, failed_requests: tally.failures.length,
      failures_kill_window: tally.failuresBetween(figures.killed_at_ms!, figures.killed_at_ms! + figures.killed_server_ready_ms! + 1000),
      failures_postgres_window: tally.failuresBetween(figures.postgres_restart_at_ms!, figures.postgres_restart_done_ms! + figures.servers_ready_after_postgres_ms! + 1000),
      failures_outside_windows: 0,
      ...Object.fromEntries(Object.entries(figures).map(([k, v]) => [k, Math.round(v)])),
      acknowledged: { calls: acked.calls.length, documents: acked.documents.length, keys_created: acked.keysCreated.length, keys_revoked: acked.keysRevoked.length, purchases: acked.purchases.length },
      revocation_checks: revocationChecks, refused_payments: refusedPayments.slice(0, 3), load_average: os.loadavg().map((l) => Number(l.toFixed(2))), at: new Date().toISOString(),
      sample_failures: tally.failures.slice(0, 5).map((f) => `${Math.round(f.at)} ms ${f.what}`),
    };
    result.failures_outside_windows = result.failed_requests - result.failures_kill_window - result.failures_postgres_window;
    console.log(JSON.stringify(result, null, 2));
    fs.writeFileSync(path.resolve(import.meta.dirname, '../bench/results/scale-out.json'), `${JSON.stringify(result, null, 2)}\n`);
    assert.ok(figures.servers_ready_after_postgres_ms! <= 10_000, `both servers answer within 10 s of the PostgreSQL restart (${figures.servers_ready_after_postgres_ms} ms)`);
    assert.ok(revocationChecks > 0 && acked.calls.length > 0 && acked.documents.length > 0 && acked.purchases.length > 0, 'the load did each kind of write');
  });
});
