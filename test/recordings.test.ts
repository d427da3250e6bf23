import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import S3rver from 's3rver';
import { S3ObjectStore } from '../src/adapters/storage/s3-object-store.ts';
import { toneWav } from '../src/modules/calls/recordings/audio.ts';
import { RecordingLinks } from '../src/modules/calls/recordings/links.ts';
import { runAuthMatrix } from './helpers/auth-matrix.ts';
import { TEST_ENCRYPTION_KEY, TEST_JWT_SECRET, testConfig, testEnv, buildTestApp } from './helpers/env.ts';
import { asRole, createAgent, createOrg, type TestOrg } from './helpers/fixtures.ts';
import { createCall, uploadRecording } from './helpers/calls.ts';
import { setConcurrencyLimit } from './helpers/limits.ts';

const WAV = toneWav(1.5, 440); // 24,044 bytes of real audio
const MP3 = Buffer.concat([Buffer.from('ID3\x04\x00\x00\x00\x00\x00\x00', 'latin1'), Buffer.alloc(3000, 0x55)]);

async function recordedCall(org: TestOrg, audio = WAV, contentType = 'audio/wav', app?: FastifyInstance) {
  const call = await createCall(org, (await createAgent(org, { recording_enabled: true })).agent_id, { to_number: '+14155550199' });
  const res = app
    ? await app.inject({ method: 'PUT', url: `/api/calls/${call.call_sid}/recording`, headers: asRole(org, 'agent_manager', { 'content-type': contentType }), payload: audio })
    : await uploadRecording(org, call.call_sid, audio, contentType);
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data;
}

/** The app-relative path and query of a signed link. */
const local = (url: string) => url.replace(/^https?:\/\/[^/]+/, '');

// The matrix makes a call for every request in one organization: more than the default concurrency limit are active at once.
const recordedPath = (suffix: string) => async (org: TestOrg) => {
  await setConcurrencyLimit(org.orgId, 100_000);
  return `/api/calls/${(await recordedCall(org)).call_sid}/recording${suffix}`;
};
runAuthMatrix({ method: 'GET', route: '/api/calls/{call_sid}/recording/stream', path: recordedPath('/stream'), permission: 'calls:read', foreignStatus: 404 });
runAuthMatrix({ method: 'GET', route: '/api/calls/{call_sid}/recording/download', path: recordedPath('/download'), permission: 'calls:read', foreignStatus: 404 });
runAuthMatrix({ method: 'PUT', route: '/api/calls/{call_sid}/recording', path: recordedPath(''), headers: { 'content-type': 'audio/wav' }, body: () => 'not audio', permission: 'calls:write', foreignStatus: 404 });

/**
 * Ten different recordings uploaded for one call at once: every upload answers 200, the call ends up
 * with exactly one of them, byte for byte, and the store keeps only that one object.
 */
async function concurrentUploads(app: FastifyInstance, objectKeys: (prefix: string) => Promise<string[]>) {
  const org = await createOrg();
  const call = await createCall(org, (await createAgent(org, { recording_enabled: true })).agent_id);
  const uploads = Array.from({ length: 10 }, (_, i) => toneWav(0.2 + i * 0.05, 300 + i * 40));
  const results = await Promise.all(uploads.map((audio) => app.inject({
    method: 'PUT', url: `/api/calls/${call.call_sid}/recording`, headers: asRole(org, 'agent_manager', { 'content-type': 'audio/wav' }), payload: audio,
  })));
  assert.deepEqual(results.map((r) => r.statusCode), uploads.map(() => 200), results.map((r) => r.body).join('\n'));
  const stored = (await app.inject({ url: `/api/calls/${call.call_sid}`, headers: asRole(org, 'user') })).json().data;
  const download = await app.inject({ url: `/api/calls/${call.call_sid}/recording/download`, headers: asRole(org, 'user') });
  assert.equal(download.statusCode, 200);
  const winner = uploads.findIndex((audio) => audio.equals(download.rawPayload));
  assert.ok(winner >= 0, `the stored ${download.rawPayload.length} bytes are none of the uploads`);
  assert.equal(stored.recording_bytes, uploads[winner]!.length);
  const keys = await objectKeys(`${org.orgId}/recordings/${call.call_sid}/`);
  assert.equal(keys.length, 1, `one object left, found ${keys.join(', ')}`);
}

describe('recordings: upload', () => {
  test('ten concurrent uploads of one call (local store): the last complete one wins whole, the replaced objects are deleted', async () => {
    const { app, config } = await testEnv();
    const root = path.join(config.dataDir, 'objects');
    await concurrentUploads(app, async (prefix) => {
      const dir = path.join(root, prefix);
      return fs.existsSync(dir) ? fs.readdirSync(dir) : [];
    });
  });

  test('a WAV is stored and the call says so; a second upload replaces it', async () => {
    const org = await createOrg();
    const call = await recordedCall(org);
    assert.equal(call.has_recording, true);
    assert.equal(call.recording_content_type, 'audio/wav');
    assert.equal(call.recording_bytes, WAV.length);
    const shorter = toneWav(0.5, 300);
    const res = await uploadRecording(org, call.call_sid, shorter, 'audio/x-wav');
    assert.equal(res.json().data.recording_bytes, shorter.length);
  });

  test('refused: agent with recording off (409), wrong type (415), not a WAV (415), empty (400), unknown call (404)', async () => {
    const org = await createOrg();
    const off = await createCall(org, (await createAgent(org, { recording_enabled: false })).agent_id);
    const disabled = await uploadRecording(org, off.call_sid, WAV);
    assert.equal(disabled.statusCode, 409);
    assert.equal(disabled.json().code, 'recording_disabled');

    const on = await createCall(org, (await createAgent(org, { recording_enabled: true })).agent_id);
    const cases: Array<[Buffer, string, number, string]> = [
      [WAV, 'application/octet-stream', 415, 'unsupported_media_type'],
      [WAV, 'audio/ogg', 415, 'unsupported_media_type'],
      [Buffer.from('plain text pretending'), 'audio/wav', 415, 'unsupported_media_type'],
      [(() => { const b = Buffer.from(WAV); b.writeUInt16LE(12, 34); return b; })(), 'audio/wav', 415, 'unsupported_media_type'], // 12-bit samples
      [WAV, 'audio/mpeg', 415, 'unsupported_media_type'],
      [Buffer.alloc(0), 'audio/wav', 400, 'validation_error'],
    ];
    for (const [body, type, status, code] of cases) {
      const res = await uploadRecording(org, on.call_sid, body, type);
      assert.equal(res.statusCode, status, `${type} ${body.length}: ${res.body}`);
      assert.equal(res.json().code, code);
    }
    const missing = await uploadRecording(org, 'call_nosuchcall000000', WAV);
    assert.equal(missing.statusCode, 404);
    const { app } = await testEnv();
    assert.equal((await app.inject({ url: `/api/calls/${on.call_sid}`, headers: asRole(org, 'user') })).json().data.has_recording, false);
  });

  test('over the size limit → 413 while streaming, nothing stored', async () => {
    const { database, tmpDir } = await testEnv();
    const small = await buildTestApp(testConfig(tmpDir, { RECORDING_MAX_BYTES: '4096' }));
    try {
      const org = await createOrg();
      const call = await createCall(org, (await createAgent(org, { recording_enabled: true })).agent_id);
      const res = await small.inject({ method: 'PUT', url: `/api/calls/${call.call_sid}/recording`, headers: asRole(org, 'agent_manager', { 'content-type': 'audio/wav' }), payload: WAV });
      assert.equal(res.statusCode, 413);
      assert.equal(res.json().code, 'payload_too_large');
      assert.equal((await small.inject({ url: `/api/calls/${call.call_sid}`, headers: asRole(org, 'user') })).json().data.has_recording, false);
    } finally {
      await small.close();
    }
  });
});

describe('recordings: stream links (local store)', () => {
  test('the link: 3600 s, type, filename; the file route serves it whole with Accept-Ranges', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const call = await recordedCall(org);
    const link = (await app.inject({ url: `/api/calls/${call.call_sid}/recording/stream`, headers: asRole(org, 'user') })).json().data;
    assert.equal(link.expires_in, 3600);
    assert.equal(link.content_type, 'audio/wav');
    assert.equal(link.filename, 'recording_+14155550199.wav');
    assert.match(link.url, new RegExp(`^http://127\\.0\\.0\\.1:3000/api/recordings/${call.call_sid}\\?org=${org.orgId}&expires=\\d+&sig=`));
    const expires = Number(new URL(link.url).searchParams.get('expires'));
    assert.ok(Math.abs(expires - (Date.now() / 1000 + 3600)) < 5);
    const whole = await app.inject({ url: local(link.url) });
    assert.equal(whole.statusCode, 200);
    assert.equal(whole.headers['content-type'], 'audio/wav');
    assert.equal(whole.headers['accept-ranges'], 'bytes');
    assert.equal(whole.headers['content-length'], String(WAV.length));
    assert.equal(whole.headers['cross-origin-resource-policy'], 'cross-origin');
    assert.ok(whole.rawPayload.equals(WAV));
  });

  test('Range: first bytes, middle, open end, suffix → 206 with Content-Range; beyond the end → 416', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const call = await recordedCall(org);
    const url = local((await app.inject({ url: `/api/calls/${call.call_sid}/recording/stream`, headers: asRole(org, 'user') })).json().data.url);
    const size = WAV.length;
    const cases: Array<[string, number, number]> = [
      ['bytes=0-99', 0, 99], ['bytes=0-0', 0, 0], ['bytes=1000-1999', 1000, 1999], ['bytes=20000-', 20000, size - 1],
      ['bytes=-100', size - 100, size - 1], ['bytes=24000-99999999', 24000, size - 1], ['bytes=-999999', 0, size - 1],
    ];
    for (const [range, start, end] of cases) {
      const res = await app.inject({ url, headers: { range } });
      assert.equal(res.statusCode, 206, range);
      assert.equal(res.headers['content-range'], `bytes ${start}-${end}/${size}`, range);
      assert.equal(res.headers['content-length'], String(end - start + 1), range);
      assert.ok(res.rawPayload.equals(WAV.subarray(start, end + 1)), range);
    }
    for (const range of [`bytes=${size}-`, 'bytes=999999-1000000', 'bytes=-0']) {
      const res = await app.inject({ url, headers: { range } });
      assert.equal(res.statusCode, 416, range);
      assert.equal(res.headers['content-range'], `bytes */${size}`);
      assert.equal(res.json().code, 'range_not_satisfiable');
    }
    const multi = await app.inject({ url, headers: { range: 'bytes=0-1,5-6' } });
    assert.equal(multi.statusCode, 200, 'several ranges: the whole file');
  });

  test('tampered, re-targeted and expired links → 403; no signature → 400', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const other = await createOrg();
    const call = await recordedCall(org);
    const theirs = await recordedCall(other);
    const link = new URL((await app.inject({ url: `/api/calls/${call.call_sid}/recording/stream`, headers: asRole(org, 'user') })).json().data.url);
    const variant = (change: (u: URL) => void) => { const u = new URL(link); change(u); return local(u.toString()); };
    const sig = link.searchParams.get('sig')!;
    const forbidden: Array<[string, string]> = [
      [variant((u) => u.searchParams.set('sig', (sig[0] === 'A' ? 'B' : 'A') + sig.slice(1))), 'link_invalid'],
      [variant((u) => u.searchParams.set('expires', String(Number(u.searchParams.get('expires')) + 3600))), 'link_invalid'],
      [variant((u) => u.searchParams.set('org', other.orgId)), 'link_invalid'],
      [variant((u) => { u.pathname = `/api/recordings/${theirs.call_sid}`; }), 'link_invalid'],
    ];
    const expired = new RecordingLinks(TEST_ENCRYPTION_KEY).sign(org.orgId, call.call_sid, 3600, Date.now() - 3601_000);
    forbidden.push([local(new RecordingLinks(TEST_ENCRYPTION_KEY).url('http://x', expired)), 'link_expired']);
    for (const [url, code] of forbidden) {
      const res = await app.inject({ url });
      assert.equal(res.statusCode, 403, url);
      assert.equal(res.json().code, code, url);
    }
    assert.equal((await app.inject({ url: `/api/recordings/${call.call_sid}` })).statusCode, 400);
    // A valid signature for another organization's call opens only that call.
    const signedForOther = new RecordingLinks(TEST_ENCRYPTION_KEY).sign(org.orgId, theirs.call_sid, 60);
    assert.equal((await app.inject({ url: local(new RecordingLinks(TEST_ENCRYPTION_KEY).url('http://x', signedForOther)) })).statusCode, 404);
  });

  test('the expiry is accepted only as the exact digits the signer wrote: other spellings of the same number → 400', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const call = await recordedCall(org);
    const link = new URL((await app.inject({ url: `/api/calls/${call.call_sid}/recording/stream`, headers: asRole(org, 'user') })).json().data.url);
    const expires = link.searchParams.get('expires')!;
    assert.match(expires, /^[1-9]\d{9}$/);
    const seconds = Number(expires);
    const spellings = [
      `0${expires}`, `000${expires}`, `${expires}.0`, `${expires}.`, `${seconds / 1e9}e9`, `${seconds / 1e3}E3`, `+${expires}`,
      ` ${expires}`, `${expires} `, `0x${seconds.toString(16)}`,
    ];
    for (const spelling of spellings) {
      assert.equal(Number(spelling), seconds, `${spelling} is the same number`);
      const res = await app.inject({ url: local(link.toString()).replace(`expires=${expires}`, `expires=${encodeURIComponent(spelling)}`) });
      assert.equal(res.statusCode, 400, `${spelling}: ${res.body}`);
      assert.equal(res.json().code, 'validation_error', spelling);
      assert.match(res.body, /expires/, spelling);
    }
    assert.equal((await app.inject({ url: local(link.toString()) })).statusCode, 200, 'the link as given still plays');
    // The signer's check alone, without the route's schema, refuses them too.
    const links = new RecordingLinks(TEST_ENCRYPTION_KEY);
    const sig = link.searchParams.get('sig')!;
    assert.doesNotThrow(() => links.verify({ orgId: org.orgId, callSid: call.call_sid, expires }, sig));
    for (const spelling of [`0${expires}`, `${expires}.0`, `${seconds / 1e9}e9`, `+${expires}`]) {
      assert.throws(() => links.verify({ orgId: org.orgId, callSid: call.call_sid, expires: spelling }, sig), (err: { code?: string }) => err.code === 'link_invalid', spelling);
    }
  });

  test('no recording → 404 on stream and download; MP3 is served as stored', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const bare = await createCall(org, (await createAgent(org, { recording_enabled: true })).agent_id);
    for (const kind of ['stream', 'download']) {
      const res = await app.inject({ url: `/api/calls/${bare.call_sid}/recording/${kind}`, headers: asRole(org, 'user') });
      assert.equal(res.statusCode, 404);
      assert.equal(res.json().code, 'not_found');
    }
    const mp3 = await recordedCall(org, MP3, 'audio/mpeg');
    const link = (await app.inject({ url: `/api/calls/${mp3.call_sid}/recording/stream`, headers: asRole(org, 'user') })).json().data;
    assert.equal(link.content_type, 'audio/mpeg');
    assert.equal(link.filename, 'recording_+14155550199.mp3');
    const played = await app.inject({ url: local(link.url) });
    assert.equal(played.headers['content-type'], 'audio/mpeg');
    assert.ok(played.rawPayload.equals(MP3));
    const download = await app.inject({ url: `/api/calls/${mp3.call_sid}/recording/download`, headers: asRole(org, 'user') });
    assert.equal(download.headers['content-type'], 'audio/mpeg');
    assert.equal(download.headers['content-disposition'], 'attachment; filename="recording_+14155550199.mp3"');
  });

  test('download: the WAV as an attachment with its length, byte for byte', async () => {
    const { app } = await testEnv();
    const org = await createOrg();
    const call = await recordedCall(org);
    const res = await app.inject({ url: `/api/calls/${call.call_sid}/recording/download`, headers: asRole(org, 'user') });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'audio/wav');
    assert.equal(res.headers['content-disposition'], 'attachment; filename="recording_+14155550199.wav"');
    assert.equal(res.headers['content-length'], String(WAV.length));
    assert.ok(res.rawPayload.equals(WAV));
  });
});

describe('recordings: S3-compatible store (s3rver on 127.0.0.1)', () => {
  let s3: S3rver;
  let app: FastifyInstance;
  let store: S3ObjectStore;
  const presigned: Array<{ seconds: number; disposition: string }> = [];
  before(async () => {
    const { database, tmpDir } = await testEnv();
    s3 = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: path.join(tmpDir, 's3rver-recordings'), configureBuckets: [{ name: 'switchboard-rec', configs: [] }] });
    const { port } = await s3.run();
    const config = testConfig(tmpDir, {
      STORAGE_BACKEND: 's3', S3_BUCKET: 'switchboard-rec', S3_ENDPOINT: `http://127.0.0.1:${port}`, S3_ACCESS_KEY_ID: 'S3RVER', S3_SECRET_ACCESS_KEY: 'S3RVER',
    });
    store = new S3ObjectStore(config.storage as never);
    const presign = store.signedReadUrl.bind(store);
    store.signedReadUrl = (key, seconds, response) => {
      presigned.push({ seconds, disposition: response.contentDisposition });
      return presign(key, seconds, response);
    };
    app = await buildTestApp(config, { store });
  });
  after(async () => {
    await app?.close();
    await s3?.close();
  });

  test('ten concurrent uploads of one call (S3): the last complete one wins whole, the replaced objects are deleted', async () => {
    await concurrentUploads(app, async (prefix) => {
      const listed = await store.client.send(new ListObjectsV2Command({ Bucket: store.bucket, Prefix: prefix }));
      return (listed.Contents ?? []).map((o) => o.Key!);
    });
  });

  test('stream is a presigned GET that honours Range; download streams through a 5-minute presigned link', async () => {
    presigned.length = 0;
    const org = await createOrg();
    const call = await recordedCall(org, WAV, 'audio/wav', app);
    const link = (await app.inject({ url: `/api/calls/${call.call_sid}/recording/stream`, headers: asRole(org, 'user') })).json().data;
    const url = new URL(link.url);
    assert.equal(url.searchParams.get('X-Amz-Expires'), '3600');
    assert.equal(link.content_type, 'audio/wav');
    const part = await fetch(link.url, { headers: { range: 'bytes=100-199' } });
    assert.equal(part.status, 206);
    assert.ok(Buffer.from(await part.arrayBuffer()).equals(WAV.subarray(100, 200)));
    const whole = await fetch(link.url);
    assert.equal(whole.headers.get('content-type'), 'audio/wav');
    assert.ok(Buffer.from(await whole.arrayBuffer()).equals(WAV));

    const download = await app.inject({ url: `/api/calls/${call.call_sid}/recording/download`, headers: asRole(org, 'user') });
    assert.equal(download.statusCode, 200);
    assert.equal(download.headers['content-disposition'], 'attachment; filename="recording_+14155550199.wav"');
    assert.equal(download.headers['content-length'], String(WAV.length));
    assert.ok(download.rawPayload.equals(WAV));
    assert.deepEqual(presigned, [
      { seconds: 3600, disposition: 'inline; filename="recording_+14155550199.wav"' },
      { seconds: 300, disposition: 'attachment; filename="recording_+14155550199.wav"' },
    ]);
  });
});
