import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, test } from 'node:test';
import { toneWav } from '../src/modules/calls/recordings/audio.ts';
import { RetentionSweeper } from '../src/modules/calls/retention/service.ts';
import { runAuthMatrix } from './helpers/auth-matrix.ts';
import { testEnv } from './helpers/env.ts';
import { asRole, createAgent, createOrg, type TestOrg } from './helpers/fixtures.ts';
import { createCall, finishedCall, patchCall, uploadRecording } from './helpers/calls.ts';

runAuthMatrix({ method: 'GET', route: '/api/settings/data', path: () => '/api/settings/data', permission: 'data_settings:read' });
runAuthMatrix({
  method: 'PATCH', route: '/api/settings/data', path: () => '/api/settings/data', permission: 'data_settings:update',
  body: () => ({ redact_pii: false }),
});

async function settings(org: TestOrg, payload?: Record<string, unknown>) {
  const { app } = await testEnv();
  return payload === undefined
    ? app.inject({ method: 'GET', url: '/api/settings/data', headers: asRole(org, 'admin') })
    : app.inject({ method: 'PATCH', url: '/api/settings/data', headers: asRole(org, 'admin'), payload });
}

async function getCall(org: TestOrg, sid: string) {
  const { app } = await testEnv();
  const res = await app.inject({ method: 'GET', url: `/api/calls/${sid}`, headers: asRole(org, 'user') });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data;
}

/** Moves a call's creation back in time, as if it had been made `days` ago (SQL, not the code under test). */
async function age(org: TestOrg, sid: string, days: number, now: Date) {
  const { database } = await testEnv();
  await database.pool.query('UPDATE calls SET created_at = $3 WHERE client_id = $1 AND call_sid = $2', [org.orgId, sid, new Date(now.getTime() - days * 86_400_000)]);
}

async function recordingKey(org: TestOrg, sid: string): Promise<string | null> {
  const { database } = await testEnv();
  const { rows } = await database.pool.query('SELECT recording_key FROM calls WHERE client_id = $1 AND call_sid = $2', [org.orgId, sid]);
  return rows[0].recording_key;
}

describe('data settings', () => {
  test('defaults keep everything and store transcripts as reported; PATCH changes only the fields given', async () => {
    const org = await createOrg();
    const initial = await settings(org);
    assert.equal(initial.statusCode, 200, initial.body);
    assert.deepEqual(initial.json().data, { transcript_retention_days: null, recording_retention_days: null, redact_pii: false, updated_at: null });

    const first = await settings(org, { transcript_retention_days: 30 });
    assert.equal(first.statusCode, 200, first.body);
    assert.equal(first.json().data.transcript_retention_days, 30);
    const second = await settings(org, { recording_retention_days: 7, redact_pii: true });
    assert.deepEqual({ ...second.json().data, updated_at: undefined }, { transcript_retention_days: 30, recording_retention_days: 7, redact_pii: true, updated_at: undefined });
    const cleared = await settings(org, { transcript_retention_days: null });
    assert.equal(cleared.json().data.transcript_retention_days, null);
    assert.equal(cleared.json().data.recording_retention_days, 7);
    assert.match(cleared.json().data.updated_at, /Z$/);
  });

  test('retention days are 1-3650 or null; an empty or unknown body is 400', async () => {
    const org = await createOrg();
    for (const payload of [
      { transcript_retention_days: 0 }, { recording_retention_days: 3651 }, { transcript_retention_days: 1.5 },
      { redact_pii: 'yes' }, {}, { retention: 3 },
    ]) {
      const res = await settings(org, payload);
      assert.equal(res.statusCode, 400, `${JSON.stringify(payload)} → ${res.body}`);
      assert.equal(res.json().code, 'validation_error');
    }
    assert.equal((await settings(org, { transcript_retention_days: 1, recording_retention_days: 3650 })).statusCode, 200);
  });
});

describe('PII redaction of transcripts', () => {
  const turn = (text: string, start_seconds: number) => ({ role: 'user', text, start_seconds });

  test('with redact_pii the stored transcript has personal data replaced, and nothing else', async () => {
    const org = await createOrg();
    const agent = await createAgent(org);
    assert.equal((await settings(org, { redact_pii: true })).statusCode, 200);
    const call = await finishedCall(org, agent.agent_id, {
      transcript: [
        turn('Mail me at jane.doe@example.com please.', 0),
        turn('My card is 4242 4242 4242 4242 and my SSN 123-45-6789.', 3.5),
        turn('Call back on +1 415 555 0100, IBAN GB82 WEST 1234 5698 7654 32.', 9),
        turn('Reference call_4f9K2mQ8xZ1pL7sT0bNc, agent_0123456789ab, 2026-11-24T10:15:00.000Z, $1,234.56, 12.5 credits.', 14),
      ],
    });
    const stored = await getCall(org, call.call_sid);
    assert.deepEqual(stored.transcript.map((t: { text: string }) => t.text), [
      'Mail me at [EMAIL] please.',
      'My card is [CARD] and my SSN [SSN].',
      'Call back on [PHONE], IBAN [IBAN].',
      'Reference call_4f9K2mQ8xZ1pL7sT0bNc, agent_0123456789ab, 2026-11-24T10:15:00.000Z, $1,234.56, 12.5 credits.',
    ]);
    assert.deepEqual(stored.transcript.map((t: { start_seconds: number }) => t.start_seconds), [0, 3.5, 9, 14]);
  });

  test('without redact_pii the transcript is stored as reported', async () => {
    const org = await createOrg();
    const agent = await createAgent(org);
    const text = 'Mail me at jane.doe@example.com, card 4242 4242 4242 4242.';
    const call = await finishedCall(org, agent.agent_id, { transcript: [turn(text, 0)] });
    assert.equal((await getCall(org, call.call_sid)).transcript[0].text, text);
  });

  test('a non-final report is redacted too', async () => {
    const org = await createOrg();
    const agent = await createAgent(org);
    await settings(org, { redact_pii: true });
    const call = await createCall(org, agent.agent_id);
    const res = await patchCall(org, call.call_sid, { status: 'in_progress', transcript: [turn('I am at bob@example.org', 1)] });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().data.transcript[0].text, 'I am at [EMAIL]');
  });
});

describe('data retention', () => {
  const WAV = toneWav(0.5, 440);

  async function recordedCall(org: TestOrg, agentId: string) {
    const call = await finishedCall(org, agentId, { transcript: [{ role: 'agent', text: 'Hello there', start_seconds: 0 }] });
    const res = await uploadRecording(org, call.call_sid, WAV);
    assert.equal(res.statusCode, 200, res.body);
    return call.call_sid as string;
  }

  test('the daily sweep deletes transcripts and recordings past retention, marks the rows, and spares the rest', async () => {
    const { app, database, services } = await testEnv();
    const now = new Date();
    const org = await createOrg();
    const keeper = await createOrg(); // no retention settings: nothing of it is touched
    const agent = await createAgent(org, { recording_enabled: true });
    const keeperAgent = await createAgent(keeper, { recording_enabled: true });
    await settings(org, { transcript_retention_days: 30, recording_retention_days: 7 });

    const old = await recordedCall(org, agent.agent_id); // 40 days: both go
    const middle = await recordedCall(org, agent.agent_id); // 10 days: the recording goes, the transcript stays
    const fresh = await recordedCall(org, agent.agent_id); // 1 day: both stay
    const keeperOld = await recordedCall(keeper, keeperAgent.agent_id);
    await age(org, old, 40, now);
    await age(org, middle, 10, now);
    await age(org, fresh, 1, now);
    await age(keeper, keeperOld, 400, now);
    const oldKey = (await recordingKey(org, old))!;
    const middleKey = (await recordingKey(org, middle))!;
    const store = services.adapters.store;
    assert.ok(store.filePath && fs.existsSync(store.filePath(oldKey)));

    const sweeper = new RetentionSweeper({ db: database.db, store, log: services.log, dataSettings: services.dataSettings, audit: services.audit, now: () => now });
    const result = await sweeper.sweep();
    assert.ok(result.transcripts >= 1 && result.recordings >= 2, JSON.stringify(result));

    const oldCall = await getCall(org, old);
    assert.deepEqual(oldCall.transcript, []);
    assert.match(oldCall.transcript_deleted_at, /Z$/);
    assert.match(oldCall.recording_deleted_at, /Z$/);
    assert.equal(oldCall.has_recording, false);
    const middleCall = await getCall(org, middle);
    assert.equal(middleCall.transcript[0].text, 'Hello there');
    assert.equal(middleCall.transcript_deleted_at, null);
    assert.match(middleCall.recording_deleted_at, /Z$/);
    const freshCall = await getCall(org, fresh);
    assert.equal(freshCall.transcript.length, 1);
    assert.equal(freshCall.has_recording, true);
    assert.equal(freshCall.recording_deleted_at, null);
    const keeperCall = await getCall(keeper, keeperOld);
    assert.equal(keeperCall.transcript.length, 1);
    assert.equal(keeperCall.has_recording, true);

    assert.equal(fs.existsSync(store.filePath(oldKey)), false, 'the object is removed from the store');
    assert.equal(fs.existsSync(store.filePath(middleKey)), false);
    for (const route of ['stream', 'download']) {
      const res = await app.inject({ method: 'GET', url: `/api/calls/${old}/recording/${route}`, headers: asRole(org, 'user') });
      assert.equal(res.statusCode, 404, res.body);
      assert.equal(res.json().code, 'recording_deleted');
    }
    const kept = await app.inject({ method: 'GET', url: `/api/calls/${fresh}/recording/stream`, headers: asRole(org, 'user') });
    assert.equal(kept.statusCode, 200, kept.body);

    // A second sweep finds nothing more to do.
    const again = await sweeper.sweep();
    const { rows } = await database.pool.query(
      'SELECT count(*)::int AS n FROM calls WHERE client_id = $1 AND (transcript_deleted_at IS NOT NULL OR recording_deleted_at IS NOT NULL)', [org.orgId]);
    assert.equal(rows[0].n, 2);
    assert.ok(again.transcripts === 0 || again.transcripts < result.transcripts);
  });

  test('a sweep that died after marking a recording deleted is finished by the next one', async () => {
    const { database, services } = await testEnv();
    const now = new Date();
    const org = await createOrg();
    const agent = await createAgent(org, { recording_enabled: true });
    await settings(org, { recording_retention_days: 3 });
    const sid = await recordedCall(org, agent.agent_id);
    const key = (await recordingKey(org, sid))!;
    // The first step of a sweep, committed, then the process died before removing the object.
    await database.pool.query('UPDATE calls SET recording_deleted_at = now() WHERE client_id = $1 AND call_sid = $2', [org.orgId, sid]);
    const store = services.adapters.store;
    assert.ok(fs.existsSync(store.filePath!(key)));

    await new RetentionSweeper({ db: database.db, store, log: services.log, dataSettings: services.dataSettings, audit: services.audit, now: () => now }).sweep();
    assert.equal(fs.existsSync(store.filePath!(key)), false);
    assert.equal(await recordingKey(org, sid), null);
  });

  test('the sweep is a recurring job of the queue', async () => {
    const { queue } = await testEnv();
    const schedules = await queue.boss.getSchedules();
    const retention = schedules.find((s) => s.name === 'data-retention');
    assert.ok(retention, JSON.stringify(schedules));
    assert.equal(retention.cron, '17 3 * * *');
  });
});
