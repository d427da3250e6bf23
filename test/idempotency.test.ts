import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, test } from 'node:test';
import { PaymentProviderError, type PaymentProvider } from '../src/adapters/payments/payment-provider.ts';
import { toneWav } from '../src/modules/calls/recordings/audio.ts';
import { IdempotencyService } from '../src/modules/idempotency/service.ts';
import { idempotencyJobs } from '../src/modules/idempotency/jobs.ts';
import { buildTestApp, testConfig, testEnv } from './helpers/env.ts';
import { asRole, createAgent, createOrg, keyHeaders, userToken, type TestOrg } from './helpers/fixtures.ts';
import { balanceOf, createCall, grantCredits } from './helpers/calls.ts';
import { multipart } from './helpers/documents.ts';

type Res = Awaited<ReturnType<Awaited<ReturnType<typeof testEnv>>['app']['inject']>>;
let keyCounter = 0;
const newKey = () => `idem-${Date.now().toString(36)}-${++keyCounter}`;

async function count(sql: string, params: unknown[]): Promise<number> {
  const { database } = await testEnv();
  const { rows } = await database.pool.query(sql, params);
  return Number(rows[0].n);
}

/**
 * 20 requests at once with one key: exactly one runs (200 without the replay header); every other
 * answer is that same response replayed or 409 idempotency_key_in_use.
 */
async function twentyAtOnce(send: () => Promise<Res>): Promise<Res> {
  const results = await Promise.all(Array.from({ length: 20 }, send));
  const ran = results.filter((r) => r.statusCode === 200 && r.headers['idempotent-replayed'] === undefined);
  assert.equal(ran.length, 1, `exactly one request ran: ${results.map((r) => `${r.statusCode} ${r.headers['idempotent-replayed'] ?? ''}`).join(', ')}`);
  for (const r of results) {
    if (r === ran[0]) continue;
    if (r.statusCode === 409) assert.equal(r.json().code, 'idempotency_key_in_use', r.body);
    else {
      assert.equal(r.statusCode, 200, r.body);
      assert.equal(r.headers['idempotent-replayed'], 'true');
      assert.equal(r.body, ran[0]!.body);
    }
  }
  return ran[0]!;
}

describe('Idempotency-Key on every write', () => {
  test('20 concurrent creations of an agent with one key create one agent', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const key = newKey();
    const ran = await twentyAtOnce(() => app.inject({
      method: 'POST', url: '/api/agents', headers: asRole(org, 'agent_manager', { 'idempotency-key': key }), payload: { agent_name: 'Once' },
    }));
    assert.equal(await count("SELECT count(*) AS n FROM agents WHERE client_id = $1 AND agent_name = 'Once'", [org.orgId]), 1);
    assert.equal(await count('SELECT count(*) AS n FROM agents WHERE id = $1', [ran.json().data.agent_id]), 1);
  });

  test('20 concurrent API key creations with one key create one key (and its secret is the one replayed)', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const key = newKey();
    const ran = await twentyAtOnce(() => app.inject({
      method: 'POST', url: '/api/api-keys', headers: asRole(org, 'admin', { 'idempotency-key': key }), payload: { name: 'ci-once', role: 'user' },
    }));
    assert.equal(await count("SELECT count(*) AS n FROM api_keys WHERE client_id = $1 AND name = 'ci-once'", [org.orgId]), 1);
    const works = await app.inject({ url: '/api/agents', headers: keyHeaders(org, ran.json().data.key) });
    assert.equal(works.statusCode, 200);
  });

  test('20 concurrent final reports (PATCH) of a call with one key: one runs, the call is billed once, none sees call_finalized', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    await grantCredits(org.orgId, 100);
    const call = await createCall(org, (await createAgent(org)).agent_id);
    const key = newKey();
    await twentyAtOnce(() => app.inject({
      method: 'PATCH', url: `/api/calls/${call.call_sid}`, headers: asRole(org, 'agent_manager', { 'idempotency-key': key }),
      payload: { status: 'completed', end_reason: 'user_hangup', cost_breakdown: { stt: 1, llm: 2, tts: 1, telephony: 1, platform: 0 } },
    }));
    assert.equal(await count("SELECT count(*) AS n FROM credit_transactions WHERE client_id = $1 AND kind = 'call_usage'", [org.orgId]), 1);
    assert.equal(await balanceOf(org.orgId), 95);
  });

  test('20 concurrent deletions of an agent with one key: one runs, none sees 404', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const agent = await createAgent(org);
    const key = newKey();
    const ran = await twentyAtOnce(() => app.inject({
      method: 'DELETE', url: `/api/agents/${agent.agent_id}`, headers: asRole(org, 'agent_manager', { 'idempotency-key': key }),
    }));
    assert.equal(ran.statusCode, 200);
    assert.equal(await count('SELECT count(*) AS n FROM agents WHERE id = $1', [agent.agent_id]), 0);
    // Without a key the same delete runs again, and finds nothing.
    assert.equal((await app.inject({ method: 'DELETE', url: `/api/agents/${agent.agent_id}`, headers: asRole(org, 'agent_manager') })).statusCode, 404);
  });

  test('a replay returns the kept response with Idempotent-Replayed: true, also for a 4xx; the first has no such header', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const key = newKey();
    const send = (payload: object) => app.inject({ method: 'POST', url: '/api/agents', headers: asRole(org, 'admin', { 'idempotency-key': key }), payload });
    const first = await send({ agent_name: 'Replay me' });
    assert.equal(first.statusCode, 200);
    assert.equal(first.headers['idempotent-replayed'], undefined);
    const again = await send({ agent_name: 'Replay me' });
    assert.equal(again.statusCode, 200);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.match(String(again.headers['content-type']), /application\/json/);
    assert.deepEqual(again.json(), first.json());
    assert.equal(await count("SELECT count(*) AS n FROM agents WHERE client_id = $1", [org.orgId]), 1);

    // A refused request is kept too (any status below 500).
    const badKey = newKey();
    const bad = () => app.inject({ method: 'POST', url: '/api/agents', headers: asRole(org, 'admin', { 'idempotency-key': badKey }), payload: { agent_name: '' } });
    const refused = await bad();
    assert.equal(refused.statusCode, 400);
    const refusedAgain = await bad();
    assert.equal(refusedAgain.statusCode, 400);
    assert.equal(refusedAgain.headers['idempotent-replayed'], 'true');
    assert.equal(refusedAgain.body, refused.body);
  });

  test('the same key with another body, path or method is 409 idempotency_key_reused', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const key = newKey();
    const headers = asRole(org, 'admin', { 'idempotency-key': key });
    const first = await app.inject({ method: 'POST', url: '/api/agents', headers, payload: { agent_name: 'A' } });
    assert.equal(first.statusCode, 200);
    for (const other of [
      app.inject({ method: 'POST', url: '/api/agents', headers, payload: { agent_name: 'B' } }),
      app.inject({ method: 'POST', url: '/api/tools', headers, payload: { agent_name: 'A' } }),
      app.inject({ method: 'PATCH', url: `/api/agents/${first.json().data.agent_id}`, headers, payload: { agent_name: 'A' } }),
    ]) {
      const res = await other;
      assert.equal(res.statusCode, 409, res.body);
      assert.equal(res.json().code, 'idempotency_key_reused');
    }
    assert.equal(await count('SELECT count(*) AS n FROM agents WHERE client_id = $1', [org.orgId]), 1);
  });

  test('keys belong to one organization and one credential', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const other = await createOrg();
    const key = newKey();
    const create = (o: TestOrg, headers: Record<string, string>) =>
      app.inject({ method: 'POST', url: '/api/agents', headers: { ...headers, 'x-organization-id': o.orgId, 'idempotency-key': key }, payload: { agent_name: 'Scoped' } });
    const byAdmin = await create(org, { 'x-api-key': org.keys.admin });
    const byManager = await create(org, { 'x-api-key': org.keys.agent_manager });
    const byUser = await create(org, { authorization: `Bearer ${await userToken({ sub: `sub-${key}` })}` });
    const elsewhere = await create(other, { 'x-api-key': other.keys.admin });
    for (const res of [byAdmin, byManager, elsewhere]) {
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.headers['idempotent-replayed'], undefined);
    }
    assert.equal(byUser.statusCode, 403, 'a user who is no member gets no replay of another credential either');
    assert.equal(await count("SELECT count(*) AS n FROM agents WHERE client_id = $1 AND agent_name = 'Scoped'", [org.orgId]), 2);
  });

  test('Idempotency-Key must be 1-255 printable characters (else 400); GET ignores it', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    for (const bad of ['', 'x'.repeat(256), 'tab\there']) {
      const res = await app.inject({ method: 'POST', url: '/api/agents', headers: asRole(org, 'admin', { 'idempotency-key': bad }), payload: { agent_name: 'K' } });
      assert.equal(res.statusCode, 400, JSON.stringify(bad));
      assert.equal(res.json().code, 'validation_error');
      assert.equal(res.json().errors[0].path, 'headers.idempotency-key');
    }
    const longest = await app.inject({ method: 'POST', url: '/api/agents', headers: asRole(org, 'admin', { 'idempotency-key': '~'.repeat(255) }), payload: { agent_name: 'K' } });
    assert.equal(longest.statusCode, 200, longest.body);
    assert.equal(await count('SELECT count(*) AS n FROM agents WHERE client_id = $1', [org.orgId]), 1);
    const list = await app.inject({ url: '/api/agents', headers: asRole(org, 'admin', { 'idempotency-key': '~'.repeat(255) }) });
    assert.equal(list.statusCode, 200);
    assert.equal(list.headers['idempotent-replayed'], undefined);
  });

  test('while the first request still runs (its recording still arriving), the same key is 409 idempotency_key_in_use', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const call = await createCall(org, (await createAgent(org, { recording_enabled: true })).agent_id);
    const wav = toneWav(0.5, 440);
    const key = newKey();
    const headers = asRole(org, 'agent_manager', { 'idempotency-key': key, 'content-type': 'audio/wav', 'content-length': String(wav.length) });
    const body = new PassThrough();
    const first = app.inject({ method: 'PUT', url: `/api/calls/${call.call_sid}/recording`, headers, payload: body });
    body.write(wav.subarray(0, 1000));
    // The first request holds the key once its handler reads the body.
    for (let i = 0; i < 200 && (await count("SELECT count(*) AS n FROM idempotency_keys WHERE key = $1 AND status = 'running'", [key])) === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const second = await app.inject({ method: 'PUT', url: `/api/calls/${call.call_sid}/recording`, headers, payload: wav });
    assert.equal(second.statusCode, 409, second.body);
    assert.equal(second.json().code, 'idempotency_key_in_use');
    body.end(wav.subarray(1000));
    const done = await first;
    assert.equal(done.statusCode, 200, done.body);
    // Now the same upload is a replay; a body of another length is another request.
    const replay = await app.inject({ method: 'PUT', url: `/api/calls/${call.call_sid}/recording`, headers, payload: wav });
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.body, done.body);
    const longer = Buffer.concat([wav, Buffer.alloc(10)]);
    const other = await app.inject({ method: 'PUT', url: `/api/calls/${call.call_sid}/recording`, headers: { ...headers, 'content-length': String(longer.length) }, payload: longer });
    assert.equal(other.json().code, 'idempotency_key_reused');
  });

  test('a multipart document upload is replayed by its key even with a new boundary', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const key = newKey();
    const upload = () => {
      const form = multipart({ name: 'notes' }, { name: 'notes.txt', content: 'Opening hours are nine to five.' });
      return app.inject({ method: 'POST', url: '/api/knowledge-base', headers: asRole(org, 'agent_manager', { 'content-type': form.contentType, 'idempotency-key': key }), payload: form.payload });
    };
    const first = await upload();
    assert.equal(first.statusCode, 200, first.body);
    const again = await upload();
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.json().data.documentation_id, first.json().data.documentation_id);
    assert.equal(await count('SELECT count(*) AS n FROM documents WHERE client_id = $1', [org.orgId]), 1);
  });

  test('a 5xx frees the key: the retry runs', async () => {
    let failures = 1;
    const flaky: PaymentProvider = {
      kind: 'local',
      async createCheckout(request) {
        if (failures-- > 0) throw new PaymentProviderError('provider down');
        return { providerSessionId: `flaky_${request.sessionId}`, url: `https://pay.example.test/${request.sessionId}` };
      },
      async verifyEvent() {
        throw new Error('not used');
      },
    };
    const { tmpDir } = await testEnv();
    const app = await buildTestApp(testConfig(tmpDir), { payments: flaky });
    try {
      const org = await createOrg();
      const key = newKey();
      const buy = () => app.inject({ method: 'POST', url: '/api/billing/credits/purchase', headers: asRole(org, 'admin', { 'idempotency-key': key }), payload: { amount: 20 } });
      const failed = await buy();
      assert.equal(failed.statusCode, 502, failed.body);
      assert.equal(await count('SELECT count(*) AS n FROM idempotency_keys WHERE client_id = $1', [org.orgId]), 0);
      const retried = await buy();
      assert.equal(retried.statusCode, 200, retried.body);
      assert.equal(retried.headers['idempotent-replayed'], undefined);
      assert.equal((await buy()).json().session_id, retried.json().session_id);
    } finally {
      await app.close();
    }
  });

  test('kept 24 hours: the scheduled cleanup job deletes expired keys (clock injected), and the key then runs anew', async () => {
    const { app, database } = await testEnv();
    const org = await createOrg();
    const key = newKey();
    const send = () => app.inject({ method: 'POST', url: '/api/agents', headers: asRole(org, 'admin', { 'idempotency-key': key }), payload: { agent_name: 'Daily' } });
    assert.equal((await send()).statusCode, 200);
    const { rows } = await database.pool.query('SELECT created_at, expires_at FROM idempotency_keys WHERE client_id = $1 AND key = $2', [org.orgId, key]);
    assert.equal(rows[0].expires_at.getTime() - rows[0].created_at.getTime(), 24 * 3600 * 1000);

    const runCleanup = async (at: Date) => {
      const [unit] = idempotencyJobs(new IdempotencyService({ database, now: () => at }), { info() {} });
      await unit!.handle({}, { id: 'test', retryCount: 0 });
    };
    await runCleanup(new Date(rows[0].expires_at.getTime() - 60_000)); // 23 h 59 min: kept
    assert.equal((await send()).headers['idempotent-replayed'], 'true');
    await runCleanup(new Date(rows[0].expires_at.getTime() + 1)); // past 24 h: deleted
    assert.equal(await count('SELECT count(*) AS n FROM idempotency_keys WHERE client_id = $1', [org.orgId]), 0);
    const anew = await send();
    assert.equal(anew.statusCode, 200);
    assert.equal(anew.headers['idempotent-replayed'], undefined);
    assert.equal(await count("SELECT count(*) AS n FROM agents WHERE client_id = $1 AND agent_name = 'Daily'", [org.orgId]), 2);

    // The job is scheduled with pg-boss (hourly), so expired keys never pile up.
    const schedule = await database.pool.query("SELECT cron FROM pgboss.schedule WHERE name = 'idempotency-cleanup'");
    assert.equal(schedule.rows[0]?.cron, '17 * * * *');
  });
});
